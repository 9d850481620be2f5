package httpapi

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// bodySchemas compiles the schema of each JSON response body of the
// document once, where kin-openapi compiles it on every response: the HTTP
// tests check some ten thousand answers, and under -race the compilation of
// a list of documents' schema cost more than the request. The schemas are
// compiled from openapi.json itself, as JSON Schema 2020-12 (what OpenAPI
// 3.1's schemas are), with the validator and the date-time check that
// kin-openapi uses.
type bodySchemas struct {
	where map[*openapi3.Operation]operationPlace // every operation of the document

	mu       sync.Mutex // held while compiling
	compiler *jsonschema.Compiler
	compiled sync.Map // JSON pointer → *jsonschema.Schema
}

// operationPlace is where an operation is in the document.
type operationPlace struct{ path, method string }

// documentURL names openapi.json to the compiler.
const documentURL = "file:///quire/httpapi/openapi.json"

func newBodySchemas(doc *openapi3.T) (*bodySchemas, error) {
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapiJSON))
	if err != nil {
		return nil, fmt.Errorf("openapi.json as JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	dateTime, ok := openapi3.SchemaStringFormats["date-time"]
	if !ok {
		return nil, fmt.Errorf("kin-openapi has no date-time format to check with")
	}
	c.RegisterFormat(&jsonschema.Format{Name: "date-time", Validate: func(v any) error {
		if s, ok := v.(string); ok {
			return dateTime.Validate(s)
		}
		return nil
	}})
	c.AssertFormat()
	if err := c.AddResource(documentURL, raw); err != nil {
		return nil, fmt.Errorf("openapi.json as a schema resource: %w", err)
	}
	b := &bodySchemas{where: map[*openapi3.Operation]operationPlace{}, compiler: c}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			b.where[op] = operationPlace{path, strings.ToLower(method)}
		}
	}
	return b, nil
}

// schema returns the compiled schema of the body of route's answer of
// status with Content-Type contentType, and true, when that body is JSON
// and the operation is one of the document's; false otherwise (an answer
// kin-openapi then checks whole, and reports the faults of, such as a
// Content-Type the operation does not have).
func (b *bodySchemas) schema(route *routers.Route, status int, contentType string) (*jsonschema.Schema, bool) {
	place, ok := b.where[route.Operation]
	if !ok {
		return nil, false
	}
	responses := route.Operation.Responses
	// The response kin-openapi's ValidateResponse picks: the status's own,
	// its range's (2XX), or the default.
	var key string
	var ref *openapi3.ResponseRef
	for _, k := range []string{strconv.Itoa(status), fmt.Sprintf("%dXX", status/100), "default"} {
		if r := responses.Value(k); r != nil {
			key, ref = k, r
			break
		}
	}
	if ref == nil || ref != responses.Status(status) && ref != responses.Default() || ref.Value == nil {
		return nil, false
	}
	media := ref.Value.Content.Get(contentType)
	if media == nil || media.Schema == nil {
		return nil, false
	}
	var mediaKey string
	for k, m := range ref.Value.Content {
		if m == media {
			mediaKey = k
		}
	}
	if mediaKey != "application/json" {
		return nil, false
	}
	var ptr []string
	if r, ok := strings.CutPrefix(ref.Ref, "#/"); ok {
		ptr = strings.Split(r, "/") // a component, already escaped
	} else if ref.Ref != "" {
		return nil, false
	} else {
		ptr = []string{"paths", escapeToken(place.path), place.method, "responses", key}
	}
	ptr = append(ptr, "content", escapeToken(mediaKey), "schema")
	loc := "/" + strings.Join(ptr, "/")
	if s, ok := b.compiled.Load(loc); ok {
		return s.(*jsonschema.Schema), true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.compiled.Load(loc); ok {
		return s.(*jsonschema.Schema), true
	}
	frag := (&url.URL{Fragment: loc}).EscapedFragment()
	s, err := b.compiler.Compile(documentURL + "#" + frag)
	if err != nil {
		// Not one to check here: kin-openapi checks it, and says why.
		return nil, false
	}
	b.compiled.Store(loc, s)
	return s, true
}

// escapeToken escapes s as a JSON pointer's token (RFC 6901).
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// checkJSONBody checks a JSON body against its compiled schema, with the
// reasons that kin-openapi gives.
func checkJSONBody(s *jsonschema.Schema, body []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("response body: failed to decode response body: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("response body doesn't match schema: %w", err)
	}
	return nil
}
