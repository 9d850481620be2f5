package main

import "net/http"

// routes is the map of quire serve's address: the API (package httpapi,
// whose routes.go lists each of its routes) owns /api and everything below
// it and the operations endpoints; every other path belongs to the pages
// (package web, whose routes.go lists each page, and which answers its own
// 404). Both sit behind one front (httpapi's Front: request id, client
// address, metrics, the log line).
func routes(api, pages http.Handler) *http.ServeMux {
	m := http.NewServeMux()
	m.Handle("/api", api)
	m.Handle("/api/", api)
	m.Handle("/healthz", api)
	m.Handle("/readyz", api)
	m.Handle("/metrics", api)
	m.Handle("/", pages)
	return m
}
