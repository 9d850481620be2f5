package main

import (
	"net/http"
	"strings"
)

// routes is the map of quire serve's address: the API (package httpapi,
// whose routes.go lists each of its routes) owns /api and everything below
// it and the operations endpoints; every other path belongs to the pages
// (package web, whose routes.go lists each page, and which answers its own
// 404). Both sit behind one front (httpapi's Front: request id, client
// address, metrics, the log line). The pages of share links answer every
// path under /s/ themselves, one not in clean form too: the same 404 as an
// unknown token, where a mux would redirect.
func routes(api, pages http.Handler) http.Handler {
	m := http.NewServeMux()
	m.Handle("/api", api)
	m.Handle("/api/", api)
	m.Handle("/healthz", api)
	m.Handle("/readyz", api)
	m.Handle("/metrics", api)
	m.Handle("/", pages)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/s/") {
			pages.ServeHTTP(w, r)
			return
		}
		m.ServeHTTP(w, r)
	})
}
