package httpapi

import (
	"net/http"
	"strings"
)

// Routes is the map of quire serve's address: the API (api, whose
// routes.go lists each of its routes) owns /api and everything below it and
// the operations endpoints; every other path belongs to the pages (package
// web, whose routes.go lists each page, and which answers its own 404).
// Both sit behind one Front. The pages of share links answer every path
// under /s/ themselves, one not in clean form too: the same 404 as an
// unknown token, where a mux would redirect. The tests of the API and of
// the pages mount the same map.
func Routes(api, pages http.Handler) http.Handler {
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
