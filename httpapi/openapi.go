package httpapi

import (
	_ "embed"
	"net/http"
)

// openapiJSON is the OpenAPI 3.1 document of this API, kept in the
// repository and checked against the server by the tests.
//
//go:embed openapi.json
var openapiJSON []byte

func handleOpenAPI() apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openapiJSON)
		return nil
	}
}
