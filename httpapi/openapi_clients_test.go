package httpapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIDocumentSuitsGenerators holds openapi.json to what the usual
// client generators (oapi-codegen, openapi-typescript) and linters (Redocly)
// need to produce clean code from it with their default settings. The Go
// client is also generated, built and driven against a real server by
// internal/apiclient's test.
func TestOpenAPIDocumentSuitsGenerators(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		t.Fatal(err)
	}
	raw := string(openapiJSON)

	t.Run("X-Request-Id is no operation's parameter", func(t *testing.T) {
		// Declared on every operation, it made every generated call take
		// a parameters argument; it is described once, in info.
		walk(doc, "", func(path string, v map[string]any) {
			if v["in"] == "header" && strings.EqualFold(fmt.Sprint(v["name"]), "X-Request-Id") {
				t.Errorf("%s declares X-Request-Id as a parameter", path)
			}
		})
	})

	t.Run("no schema uses if/then", func(t *testing.T) {
		// openapi-typescript renders each as "unknown"; the rules go in
		// descriptions (and, for Error, errorRules checks them).
		walk(doc, "", func(path string, v map[string]any) {
			if _, ok := v["if"]; ok {
				t.Errorf("%s has if/then", path)
			}
		})
	})

	t.Run("no field of a request body has a default", func(t *testing.T) {
		// openapi-typescript makes a field with a default required; the
		// default goes in the description.
		for _, name := range requestBodySchemas(doc) {
			s := doc["components"].(map[string]any)["schemas"].(map[string]any)[name]
			walk(s, "#/components/schemas/"+name, func(path string, v map[string]any) {
				if _, ok := v["default"]; ok {
					t.Errorf("%s has a default", path)
				}
			})
		}
	})

	t.Run("every const and enum of an error code has a type", func(t *testing.T) {
		// Without "type", oapi-codegen makes the field interface{}.
		walk(doc, "", func(path string, v map[string]any) {
			_, c := v["const"]
			_, e := v["enum"]
			if _, typed := v["type"]; (c || e) && !typed {
				t.Errorf("%s: const or enum without type", path)
			}
		})
	})

	t.Run("every component is used", func(t *testing.T) {
		// Redocly's no-unused-components.
		for kind, m := range doc["components"].(map[string]any) {
			if kind == "securitySchemes" {
				continue
			}
			for name := range m.(map[string]any) {
				if !strings.Contains(raw, `"#/components/`+kind+`/`+name+`"`) {
					t.Errorf("components/%s/%s is not used", kind, name)
				}
			}
		}
	})
}

// walk calls fn on every object under v, with its JSON pointer.
func walk(v any, path string, fn func(path string, v map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(path, v)
		for k, c := range v {
			walk(c, path+"/"+k, fn)
		}
	case []any:
		for i, c := range v {
			walk(c, fmt.Sprintf("%s/%d", path, i), fn)
		}
	}
}

// requestBodySchemas names the component schemas request bodies refer to.
func requestBodySchemas(doc map[string]any) []string {
	var names []string
	walk(doc["paths"], "", func(path string, v map[string]any) {
		if !strings.HasSuffix(path, "/requestBody/content/application~1json") && !strings.HasSuffix(path, "/requestBody/content/application/json") {
			return
		}
		if s, ok := v["schema"].(map[string]any); ok {
			if ref, ok := s["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
	})
	return names
}
