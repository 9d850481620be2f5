package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// headerChecks checks the headers of an answer against the schemas of
// their declarations, each compiled once. kin-openapi's ValidateResponse
// checks them first, but builds a JSON Schema 2020-12 validator for every
// header of every answer it checks (compiling its pattern, and checking
// the schema against the meta-schema): about 2 s of each HTTP test
// process's CPU under -race, more than all the bodies. The headers it
// checks here (a plain schema of type string or integer, in the "simple"
// style, which every header of openapi.json is) are taken out of the
// operation that kin-openapi is then given (stripped); any other it
// leaves to kin-openapi.
type headerChecks struct {
	stripped sync.Map // *openapi3.Operation → *openapi3.Operation
	compiled sync.Map // *openapi3.Schema → *jsonschema.Schema
}

// check checks the headers of the answer of route with status that the
// response kin-openapi would pick declares and handled declares, as
// kin-openapi does: a required one must be there, and the first value of
// one that is there, decoded by its type, must match its schema. It returns
// the route to give kin-openapi: route with those headers taken out.
func (h *headerChecks) check(route *routers.Route, status int, header http.Header) (*routers.Route, error) {
	op := route.Operation
	if op == nil || op.Responses == nil || op.Responses.Len() == 0 {
		return route, nil
	}
	stripped := h.strip(op)
	out := *route
	out.Operation = stripped
	switch status {
	case http.StatusNotModified, http.StatusPermanentRedirect, http.StatusTemporaryRedirect, http.StatusMovedPermanently:
		return &out, nil // statuses kin-openapi does not check
	}
	ref := op.Responses.Status(status)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return &out, nil // kin-openapi reports it
	}
	var problems []error
	for _, name := range slices.Sorted(maps.Keys(ref.Value.Headers)) {
		decl := ref.Value.Headers[name]
		if !handled(name, decl) {
			continue
		}
		raw, ok := header[http.CanonicalHeaderKey(name)]
		if !ok || len(raw) == 0 {
			if decl.Value.Required {
				problems = append(problems, fmt.Errorf("response header %q missing", name))
			}
			continue
		}
		var v any = raw[0]
		if decl.Value.Schema.Value.Type.Is(openapi3.TypeInteger) {
			n, err := strconv.ParseInt(raw[0], 10, 64)
			if err != nil {
				problems = append(problems, fmt.Errorf("unable to decode header %q value: %w", name, err))
				continue
			}
			v = json.Number(strconv.FormatInt(n, 10))
		}
		s, err := h.schema(decl.Value.Schema.Value)
		if err != nil {
			return nil, fmt.Errorf("response header %q: compile its schema: %w", name, err)
		}
		if err := s.Validate(v); err != nil {
			problems = append(problems, fmt.Errorf("response header %q doesn't match schema: %w", name, err))
		}
	}
	return &out, errors.Join(problems...)
}

// handled reports whether check checks the header declared by decl; those
// it does not, kin-openapi does.
func handled(name string, decl *openapi3.HeaderRef) bool {
	if decl == nil || decl.Value == nil || http.CanonicalHeaderKey(name) == "Content-Type" {
		return false
	}
	d := decl.Value
	if d.Content != nil || d.Schema == nil || d.Schema.Value == nil || d.Schema.Ref != "" ||
		(d.Style != "" && d.Style != openapi3.SerializationSimple) {
		return false
	}
	s := d.Schema.Value
	if len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 || s.Not != nil || s.Format != "" || s.Type == nil || len(s.Type.Slice()) != 1 {
		return false
	}
	return s.Type.Is(openapi3.TypeString) || s.Type.Is(openapi3.TypeInteger)
}

// strip returns op without the headers check checks (made once per
// operation).
func (h *headerChecks) strip(op *openapi3.Operation) *openapi3.Operation {
	if s, ok := h.stripped.Load(op); ok {
		return s.(*openapi3.Operation)
	}
	out := *op
	out.Responses = openapi3.NewResponses()
	out.Responses.Delete("default")
	for key, ref := range op.Responses.Map() {
		if ref == nil || ref.Value == nil {
			out.Responses.Set(key, ref)
			continue
		}
		r := *ref.Value
		r.Headers = openapi3.Headers{}
		for name, decl := range ref.Value.Headers {
			if !handled(name, decl) {
				r.Headers[name] = decl
			}
		}
		out.Responses.Set(key, &openapi3.ResponseRef{Ref: ref.Ref, Value: &r})
	}
	s, _ := h.stripped.LoadOrStore(op, &out)
	return s.(*openapi3.Operation)
}

// schema compiles s as JSON Schema 2020-12, once.
func (h *headerChecks) schema(s *openapi3.Schema) (*jsonschema.Schema, error) {
	if c, ok := h.compiled.Load(s); ok {
		return c.(*jsonschema.Schema), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "file:///quire/httpapi/header-schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	got, _ := h.compiled.LoadOrStore(s, compiled)
	return got.(*jsonschema.Schema), nil
}
