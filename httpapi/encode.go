package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"quire"
)

// maxDepth is the deepest nesting of objects and arrays a body may have.
const maxDepth = 32

// decode reads a required JSON object body into a T. It answers the wire
// conventions of contract section 3: 415 for a Content-Type other than JSON,
// 413 past the body limit (applied by the middleware), INVALID_JSON for an
// empty body, invalid JSON or UTF-8, a non-object, nesting deeper than 32 or
// trailing data, and VALIDATION_ERROR naming a field of the wrong type.
// Unknown fields are ignored.
func decode[T any](w http.ResponseWriter, r *http.Request) (T, error) {
	v, present, err := decodeOptional[T](w, r)
	if err == nil && !present {
		err = errInvalidJSON("Request body is required")
	}
	return v, err
}

// decodeSameOrigin refuses a request from another origin whatever carries
// it, then decodes its body as decode does. The steps of a sign-in use it,
// so that no other site can sign a browser in to an account of its choosing.
func decodeSameOrigin[T any](w http.ResponseWriter, r *http.Request, checkOrigin func(*http.Request) error) (T, error) {
	if err := checkOrigin(r); err != nil {
		var zero T
		return zero, err
	}
	return decode[T](w, r)
}

// required is the VALIDATION_ERROR that names, as "is required", each of
// fields that is absent, null or empty; nil when none is.
func required(fields map[string]*string) error {
	return missing(fields, true)
}

// present is required for fields where an empty string is an answer (a
// password that is too short, not absent): only absent or null ones are
// named.
func present(fields map[string]*string) error {
	return missing(fields, false)
}

func missing(fields map[string]*string, orEmpty bool) error {
	out := map[string]string{}
	for name, v := range fields {
		if v == nil || orEmpty && *v == "" {
			out[name] = "is required"
		}
	}
	if len(out) > 0 {
		return quire.Invalid(out)
	}
	return nil
}

// requiredJSON is VALIDATION_ERROR naming field when raw, its value, is
// absent or null.
func requiredJSON(field string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return quire.Invalid(map[string]string{field: "is required"})
	}
	return nil
}

// decodeOptional is decode for endpoints whose body may be absent; present
// reports whether there was one.
func decodeOptional[T any](w http.ResponseWriter, r *http.Request) (v T, present bool, err error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return v, false, quire.Errorf(quire.EUNSUPPORTEDMEDIATYPE, "Content-Type must be application/json")
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return v, false, errTooLarge
		}
		return v, false, errInvalidJSON("Request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return v, false, nil
	}
	if !utf8.Valid(body) {
		return v, true, errInvalidJSON("Request body is not valid UTF-8")
	}
	if err := checkShape(body); err != nil {
		return v, true, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return v, true, quire.Invalid(map[string]string{typeErr.Field: "must be " + jsonKind(typeErr.Type.Kind().String())})
		}
		return v, true, errInvalidJSON("Request body is not valid JSON")
	}
	return v, true, nil
}

// checkShape verifies that body is one JSON object, nested no deeper than
// maxDepth, with nothing after it. It walks tokens, so a deep body is refused
// before it is decoded.
func checkShape(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	depth := 0
	first := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if depth != 0 {
				return errInvalidJSON("Request body is not valid JSON")
			}
			return nil
		}
		if err != nil {
			return errInvalidJSON("Request body is not valid JSON")
		}
		if first {
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return errInvalidJSON("Request body must be a JSON object")
			}
			first = false
		} else if depth == 0 {
			return errInvalidJSON("Request body must hold one JSON object")
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			if depth > maxDepth {
				return errInvalidJSON(fmt.Sprintf("Request body is nested deeper than %d levels", maxDepth))
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func jsonKind(goKind string) string {
	switch {
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "a boolean"
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"), strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "slice" || goKind == "array":
		return "an array"
	case goKind == "map" || goKind == "struct":
		return "an object"
	}
	return "of another type"
}

func errInvalidJSON(msg string) *quire.Error { return quire.Errorf(quire.EINVALIDJSON, "%s", msg) }

var errTooLarge = quire.Errorf(quire.EPAYLOADTOOLARGE, "Request body is too large")

// handleList answers 200 {key: [...]}: what list returns for the caller,
// each item as conv writes it.
func handleList[T, J any](list func(context.Context, quire.Actor) ([]T, error), key string, conv func(*T) J) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		items, err := list(r.Context(), actor)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{key: convertAll(items, conv)})
	}
}

// convertAll is items, each converted by conv: never nil, so that an empty
// list is written [].
func convertAll[T, J any](items []T, conv func(*T) J) []J {
	out := make([]J, len(items))
	for i := range items {
		out[i] = conv(&items[i])
	}
	return out
}

// writeJSON writes v as the JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
	return nil
}

// timeLayout is RFC 3339 in UTC with exactly six fractional digits.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// formatTime renders a timestamp as the contract's wire form.
func formatTime(t time.Time) string { return t.UTC().Truncate(time.Microsecond).Format(timeLayout) }

// errorBody is the one error shape of the API.
type errorBody struct {
	Code      string            `json:"code"`
	Message   string            `json:"message"`
	Fields    map[string]string `json:"fields,omitempty"`
	UpdatedAt string            `json:"updated_at,omitempty"`
	Document  any               `json:"document,omitempty"`
}
