//go:build !unix

package main

// lockServe takes no lock where flock(2) does not exist: two quire serve
// on one SQLite file are then not refused.
func lockServe(path string) (unlock func(), err error) { return func() {}, nil }
