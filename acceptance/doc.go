// Package acceptance tests quire's web application end to end, as its
// users meet it: its pages through HTTP (forms, links, redirects, the
// bounds of every page) and, in headless Chromium, what its scripts do.
// Each test starts a server of its own (package web with the API beside
// it, as quire serve builds them) on a database of its own.
//
// These tests were package web's; they are a package of their own only
// so that they start first: go test runs the test binaries of ./... in
// the order of their import paths, two at a time on two cores, and the
// slowest package, started last, ran alone at the end of the suite.
package acceptance
