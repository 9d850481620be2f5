package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/go-cmp/cmp"
)

// apiSpec is openapi.json loaded, validated and routed, once per test binary:
// checkResponse runs on every response of the HTTP tests.
type apiSpec struct {
	doc    *openapi3.T
	router routers.Router
	// unrouted stands in for the operation of a path or method that the
	// document does not have: the only answers it allows are the contract's
	// 404 (unknown path) or 405 (known path, other method), and the 413 the
	// server gives before routing to a body declared too large. Outside /api
	// they come without Cache-Control.
	unrouted map[unroutedKey]*openapi3.Operation
	// passed holds the keys of answers that passed validation.
	passed sync.Map
	// bodies compiles the JSON schemas of response bodies (bodySchema).
	bodies *bodySchemas
	// headers checks the headers of answers (headerChecks).
	headers headerChecks
}

type unroutedKey struct{ knownPath, api bool }

var loadSpec = sync.OnceValues(func() (*apiSpec, error) {
	loader := openapi3.NewLoader()
	// Everything is in the one file; a $ref to anything outside it is a
	// mistake, not something to fetch.
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(openapiJSON)
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	// Validate knows from the "openapi" field that this is 3.1 and checks the
	// schemas as JSON Schema 2020-12 (type arrays, const, if/then).
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.json is not a valid OpenAPI document: %w", err)
	}
	// The servers entry ("/") would make the router match scheme and host;
	// the tests' server listens on a random port, so route on paths alone.
	routed := *doc
	routed.Servers = nil
	router, err := gorillamux.NewRouter(&routed)
	if err != nil {
		return nil, fmt.Errorf("route openapi.json: %w", err)
	}
	bodies, err := newBodySchemas(&routed)
	if err != nil {
		return nil, err
	}
	sp := &apiSpec{doc: &routed, router: router, bodies: bodies}
	responses := doc.Components.Responses
	for _, name := range []string{"NotFound", "PayloadTooLarge"} {
		if responses[name] == nil {
			return nil, fmt.Errorf("openapi.json: components/responses/%s is missing", name)
		}
	}
	// The answers to a request no operation has are described in the
	// document's text (decision 4), not as components: a component no
	// operation uses is one generators and linters complain of. They are
	// built here from the document's own pieces.
	routeNotFound := responses["NotFound"]
	methodNotAllowed := errorResponse(routeNotFound, "METHOD_NOT_ALLOWED")
	methodNotAllowed.Value.Headers["Allow"] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Required: true, Schema: openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, MinLength: 1}),
	}}}
	sp.unrouted = map[unroutedKey]*openapi3.Operation{}
	for _, api := range []bool{false, true} {
		sp.unrouted[unroutedKey{knownPath: false, api: api}] = unroutedOperation(api, map[int]*openapi3.ResponseRef{
			http.StatusNotFound: routeNotFound, http.StatusRequestEntityTooLarge: responses["PayloadTooLarge"],
		})
		sp.unrouted[unroutedKey{knownPath: true, api: api}] = unroutedOperation(api, map[int]*openapi3.ResponseRef{
			http.StatusMethodNotAllowed: methodNotAllowed, http.StatusRequestEntityTooLarge: responses["PayloadTooLarge"],
		})
	}
	return sp, nil
})

// errorResponse is like, with its headers, but its body is an Error with
// the one code given.
func errorResponse(like *openapi3.ResponseRef, code string) *openapi3.ResponseRef {
	r := *like.Value
	r.Headers = maps.Clone(like.Value.Headers)
	errSchema := like.Value.Content.Get("application/json").Schema.Value.AllOf[0]
	only := openapi3.NewSchemaRef("", &openapi3.Schema{Properties: openapi3.Schemas{
		"code": openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, Enum: []any{code}}),
	}})
	r.Content = openapi3.NewContentWithJSONSchemaRef(openapi3.NewSchemaRef("", &openapi3.Schema{AllOf: openapi3.SchemaRefs{errSchema, only}}))
	return &openapi3.ResponseRef{Value: &r}
}

// errorRules are the rules of the Error schema's description that JSON
// Schema would say with if/then, which client generators render badly:
// VALIDATION_ERROR names its fields, and three codes have a fixed message.
func errorRules(body []byte) error {
	var e struct {
		Code    string            `json:"code"`
		Message string            `json:"message"`
		Fields  map[string]string `json:"fields"`
	}
	if json.Unmarshal(body, &e) != nil {
		return nil // not an error body: the schema's check reports it
	}
	fixed := map[string][]string{
		"TOO_MANY_ATTEMPTS":   {"Too many login attempts, please try again later."},
		"INVALID_CREDENTIALS": {"Invalid email or password", "The passkey was not accepted", passkeyNoUVMessage},
		"INTERNAL":            {"Internal server error"},
	}
	switch {
	case e.Code == "VALIDATION_ERROR" && len(e.Fields) == 0:
		return errors.New("a VALIDATION_ERROR without fields naming what is wrong")
	case fixed[e.Code] != nil && !slices.Contains(fixed[e.Code], e.Message):
		return fmt.Errorf("%s has the message %q, not one of its fixed messages %q", e.Code, e.Message, fixed[e.Code])
	}
	return nil
}

func unroutedOperation(api bool, byStatus map[int]*openapi3.ResponseRef) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses()
	op.Responses.Delete("default")
	for status, ref := range byStatus {
		if !api {
			r := *ref.Value
			r.Headers = openapi3.Headers{}
			for name, h := range ref.Value.Headers {
				if name != "Cache-Control" {
					r.Headers[name] = h
				}
			}
			ref = &openapi3.ResponseRef{Value: &r}
		}
		op.Responses.Set(fmt.Sprint(status), ref)
	}
	return op
}

// checkResponse fails t, through t.Errorf, when the response to req is not
// one the OpenAPI document allows: an undocumented status, a missing or
// malformed header, or a body that does not match the schema of its status.
// A request the document has no operation for must have been answered 404
// (unknown path) or 405 with Allow (known path) in the contract's error shape.
// Every response must carry X-Request-Id, every /api response
// Cache-Control: no-store and X-Content-Type-Options: nosniff. The harness
// calls it on every response.
func checkResponse(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	sp, err := loadSpec()
	if err != nil {
		t.Errorf("openapi: %v", err)
		return
	}
	if err := sp.check(req, status, header, body); err != nil {
		t.Errorf("openapi: the answer to %s %s is not one the OpenAPI document allows:\n%v\n-- status %d, Content-Type %q, body:\n%s",
			req.Method, req.URL.RequestURI(), err, status, header.Get("Content-Type"), excerpt(body))
	}
}

func (sp *apiSpec) check(req *http.Request, status int, header http.Header, body []byte) error {
	var problems []error
	fail := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }

	if !requestIDForm.MatchString(header.Get("X-Request-Id")) {
		fail("X-Request-Id is %q: every response carries one of 1 to 128 characters of A-Za-z0-9._-", header.Get("X-Request-Id"))
	}
	p := req.URL.Path
	api := p == "/api" || strings.HasPrefix(p, "/api/")
	if api && header.Get("Cache-Control") != "no-store" {
		fail("Cache-Control is %q: every /api response carries no-store", header.Get("Cache-Control"))
	}
	if api && header.Get("X-Content-Type-Options") != "nosniff" {
		fail("X-Content-Type-Options is %q: every /api response carries nosniff", header.Get("X-Content-Type-Options"))
	}

	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		// Only a path that is not in clean form may be redirected, and only
		// to its clean form.
		clean := cleanPath(p)
		loc := header.Get("Location")
		if clean == p {
			fail("redirect of a path already in clean form (to %q)", loc)
		} else if locPath, _, _ := strings.Cut(loc, "?"); locPath != clean {
			fail("redirect of %q to %q, not to its clean form %q", p, loc, clean)
		}
		return errors.Join(problems...)
	}

	// GET operations answer HEAD too: the same status and headers, no body.
	head := req.Method == http.MethodHead
	lookup := req
	if head {
		lookup = req.Clone(req.Context())
		lookup.Method = http.MethodGet
	}
	route, params, err := sp.router.FindRoute(lookup)
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		route = &routers.Route{Spec: sp.doc, Path: p, Method: lookup.Method, Operation: sp.unrouted[unroutedKey{knownPath: false, api: api}]}
		if status != http.StatusNotFound && status != http.StatusRequestEntityTooLarge {
			fail("no operation of the document has this path, so the answer must be 404 NOT_FOUND, not %d", status)
		}
	case errors.Is(err, routers.ErrMethodNotAllowed):
		route = &routers.Route{Spec: sp.doc, Path: p, Method: lookup.Method, Operation: sp.unrouted[unroutedKey{knownPath: true, api: api}]}
		if status != http.StatusMethodNotAllowed && status != http.StatusRequestEntityTooLarge {
			fail("the document has this path but no %s operation for it, so the answer must be 405 METHOD_NOT_ALLOWED, not %d",
				req.Method, status)
		}
		if status == http.StatusMethodNotAllowed {
			if err := sp.checkAllow(lookup, header.Get("Allow")); err != nil {
				problems = append(problems, err)
			}
		}
	case err != nil:
		return fmt.Errorf("find the operation: %w", err)
	}

	if err := sp.validate(route, params, lookup, head, status, header, body); err != nil {
		problems = append(problems, err)
	}
	if status >= 400 {
		if err := errorRules(body); err != nil {
			problems = append(problems, err)
		}
	}
	if head && len(body) > 0 {
		fail("a HEAD answer has a body of %d bytes", len(body))
	}
	return errors.Join(problems...)
}

// validate checks status, headers and body against the operation of route.
// kin-openapi builds a JSON Schema 2020-12 validator afresh on every call
// (about 2 ms, ten times that under -race for a list of documents), so an
// answer identical to one that passed before, the same operation, status,
// headers and body but for X-Request-Id (checked apart), is not validated
// again: the authorization matrices and fuzz targets repeat the same error
// answers thousands of times. The headers are checked against their
// schemas compiled once (headerChecks). A JSON body of an operation of the
// document is checked against its schema compiled once (bodySchema) by the
// JSON Schema 2020-12 validator kin-openapi uses; kin-openapi checks the
// status, any header headerChecks leaves to it, and every other answer
// whole.
func (sp *apiSpec) validate(route *routers.Route, params map[string]string, req *http.Request, head bool,
	status int, header http.Header, body []byte) error {
	key := sha256.New()
	fmt.Fprintf(key, "%p %s %t %d\n", route.Operation, route.Path, head, status)
	names := slices.Sorted(maps.Keys(header))
	for _, name := range names {
		if name != "X-Request-Id" && name != "Date" {
			fmt.Fprintf(key, "%s: %q\n", name, header[name])
		}
	}
	key.Write(body)
	sum := string(key.Sum(nil))
	if _, ok := sp.passed.Load(sum); ok {
		return nil
	}

	bodySch, jsonBody := sp.bodies.schema(route, status, header.Get("Content-Type"))
	if head {
		jsonBody = false
	}
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		ExcludeResponseBody:   head || jsonBody,
	}
	opts.WithCustomSchemaErrorFunc(schemaErrorMessage)
	// The headers are checked here, their schemas compiled once; kin-openapi
	// gets the operation without them (headerChecks).
	stripped, headerErr := sp.headers.check(route, status, header)
	if stripped == nil {
		return headerErr
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: stripped, Options: opts,
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: opts,
	}
	if err := errors.Join(headerErr, openapi3filter.ValidateResponse(context.Background(), in)); err != nil {
		return err
	}
	if jsonBody {
		if err := checkJSONBody(bodySch, body); err != nil {
			return err
		}
	}
	sp.passed.Store(sum, struct{}{})
	return nil
}

// checkAllow compares a 405's Allow header with the methods the document
// has for the path (HEAD going with GET).
func (sp *apiSpec) checkAllow(req *http.Request, allow string) error {
	var want []string
	for _, m := range []string{http.MethodDelete, http.MethodGet, http.MethodPatch, http.MethodPost, http.MethodPut} {
		probe := req.Clone(req.Context())
		probe.Method = m
		if _, _, err := sp.router.FindRoute(probe); err == nil {
			want = append(want, m)
			if m == http.MethodGet {
				want = append(want, http.MethodHead)
			}
		}
	}
	var got []string
	for _, m := range strings.Split(allow, ",") {
		if m = strings.TrimSpace(m); m != "" {
			got = append(got, strings.ToUpper(m))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("Allow is %q, but the document has %v for this path", allow, want)
	}
	return nil
}

// schemaErrorMessage keeps kin-openapi's schema errors to the place and the
// reason; by default they carry the whole schema and value.
func schemaErrorMessage(err *openapi3.SchemaError) string {
	if ptr := err.JSONPointer(); len(ptr) > 0 {
		return fmt.Sprintf("at /%s: %s", strings.Join(ptr, "/"), err.Reason)
	}
	return err.Reason
}

// cleanPath is the clean form of a request path as net/http's ServeMux
// computes it before redirecting to it.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// requestIDForm is the contract's form of X-Request-Id, kept apart from the
// middleware's own check so that a fault there is caught here.
var requestIDForm = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

func excerpt(body []byte) string {
	const max = 2000
	if len(body) > max {
		return string(body[:max]) + fmt.Sprintf("... (%d bytes)", len(body))
	}
	return string(body)
}

// TestOpenAPIDocumentIsValid loads openapi.json as the server embeds it and
// checks that it is valid OpenAPI 3.1, that it has exactly the operations of
// the contract, and that each operation documents the answers every endpoint
// of its kind can give.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	sp, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	doc := sp.doc

	t.Run("it is OpenAPI 3.1 and valid JSON", func(t *testing.T) {
		if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
			t.Errorf("openapi is %q, want 3.1.0", doc.OpenAPI)
		}
		var v map[string]any
		if err := json.Unmarshal(openapiJSON, &v); err != nil {
			t.Errorf("openapi.json is not JSON: %v", err)
		}
	})

	t.Run("it has every operation of the contract and no other", func(t *testing.T) {
		want := []string{
			"DELETE /api/admin/departments/{id}",
			"DELETE /api/admin/projects/{id}",
			"DELETE /api/admin/projects/{id}/members/{userId}",
			"DELETE /api/admin/users/{id}/mfa",
			"DELETE /api/auth/mfa/totp",
			"DELETE /api/auth/sessions",
			"DELETE /api/auth/sessions/{id}",
			"DELETE /api/auth/tokens/{id}",
			"DELETE /api/documentation/attachments/{id}",
			"DELETE /api/auth/passkeys/{id}",
			"DELETE /api/documentation/documents/{id}",
			"DELETE /api/documentation/folders/{id}",
			"DELETE /api/documentation/trash/{id}",
			"GET /api/admin/audit",
			"GET /api/admin/departments",
			"GET /api/admin/projects",
			"GET /api/admin/roles",
			"GET /api/admin/users",
			"GET /api/auth/me",
			"GET /api/auth/sessions",
			"GET /api/auth/tokens",
			"GET /api/auth/passkeys",
			"GET /api/documentation/documents",
			"GET /api/documentation/attachments/{id}/content",
			"GET /api/documentation/documents/{id}",
			"GET /api/documentation/documents/{id}/attachments",
			"GET /api/documentation/documents/{id}/backlinks",
			"GET /api/documentation/documents/{id}/versions",
			"GET /api/documentation/documents/{id}/versions/{versionNumber}",
			"GET /api/documentation/documents/{id}/versions/{versionNumber}/diff",
			"GET /api/documentation/folders",
			"GET /api/documentation/trash",
			"GET /api/openapi.json",
			"GET /healthz",
			"GET /metrics",
			"GET /readyz",
			"PATCH /api/admin/departments/{id}",
			"PATCH /api/admin/projects/{id}",
			"PATCH /api/admin/users/{id}",
			"PATCH /api/auth/passkeys/{id}",
			"POST /api/admin/departments",
			"POST /api/admin/projects",
			"POST /api/admin/users",
			"POST /api/admin/users/{id}/resend-invite",
			"POST /api/admin/users/{id}/unlock",
			"POST /api/auth/change-password",
			"POST /api/auth/forgot-password",
			"POST /api/auth/login",
			"POST /api/auth/login/mfa",
			"POST /api/auth/logout",
			"POST /api/auth/mfa/totp",
			"POST /api/auth/mfa/totp/confirm",
			"POST /api/auth/reset-password",
			"POST /api/auth/setup-password",
			"POST /api/auth/tokens",
			"POST /api/auth/passkeys/login/begin",
			"POST /api/auth/passkeys/login/finish",
			"POST /api/auth/passkeys/register/begin",
			"POST /api/auth/passkeys/register/finish",
			"POST /api/documentation/documents",
			"POST /api/documentation/documents/{id}/attachments",
			"POST /api/documentation/documents/{id}/versions/{versionNumber}/restore",
			"POST /api/documentation/folders",
			"POST /api/documentation/trash/{id}/restore",
			"PUT /api/admin/projects/{id}/members/{userId}",
			"PUT /api/admin/roles/{key}",
			"PUT /api/documentation/documents/{id}",
			"PUT /api/documentation/folders/{id}",
		}
		// Webhooks, export and import (product.md section 16).
		want = append(want,
			"GET /api/admin/webhooks", "POST /api/admin/webhooks", "GET /api/admin/webhooks/{id}",
			"PATCH /api/admin/webhooks/{id}", "DELETE /api/admin/webhooks/{id}", "GET /api/admin/webhooks/{id}/deliveries",
			"GET /api/documentation/export", "POST /api/documentation/import")
		// Bulk changes of a selection (issue 26; bulk.go).
		want = append(want, "POST /api/documentation/documents/bulk")
		// Comments (product.md section 18; comments.go).
		want = append(want,
			"GET /api/documentation/documents/{id}/comments", "POST /api/documentation/documents/{id}/comments",
			"PATCH /api/documentation/comments/{id}", "DELETE /api/documentation/comments/{id}",
			"POST /api/documentation/comments/{id}/resolve", "POST /api/documentation/comments/{id}/reopen",
			"PUT /api/documentation/comments/{id}/reactions/{emoji}",
			"DELETE /api/documentation/comments/{id}/reactions/{emoji}")
		// Share links (product.md section 21; shares.go).
		want = append(want, "POST /api/documentation/documents/{id}/shares", "GET /api/documentation/documents/{id}/shares",
			"DELETE /api/documentation/shares/{id}", "GET /api/admin/shares", "GET /api/admin/settings", "PUT /api/admin/settings")
		// Mentions, watching and notifications (product.md section 19; notify.go).
		want = append(want,
			"GET /api/documentation/documents/{id}/mentionable",
			"PUT /api/documentation/documents/{id}/watch", "DELETE /api/documentation/documents/{id}/watch",
			"PUT /api/documentation/folders/{id}/watch", "DELETE /api/documentation/folders/{id}/watch",
			"GET /api/documentation/watching", "GET /api/documentation/notifications",
			"POST /api/documentation/notifications/read",
			"GET /api/auth/notification-settings", "PUT /api/auth/notification-settings",
			"POST /api/unsubscribe")
		// Presence on a document edited live (product.md section 20; live.go).
		want = append(want, "GET /api/documentation/documents/{id}/presence")
		slices.Sort(want)
		var got []string
		for p, item := range doc.Paths.Map() {
			for m := range item.Operations() {
				got = append(got, m+" "+p)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("operations differ from the contract (-contract +document):\n%s", diff)
		}
	})

	t.Run("every operation documents the answers its kind can give", func(t *testing.T) {
		public := map[string]bool{
			"/api/auth/login": true, "/api/auth/login/mfa": true, "/api/auth/forgot-password": true, "/api/auth/reset-password": true,
			"/api/auth/setup-password": true, "/api/openapi.json": true, "/healthz": true, "/readyz": true, "/metrics": true,
		}
		public["/api/auth/passkeys/login/begin"], public["/api/auth/passkeys/login/finish"] = true, true
		public["/api/unsubscribe"] = true // RFC 8058: the signed token is the credential
		for p, item := range doc.Paths.Map() {
			for m, op := range item.Operations() {
				name := m + " " + p
				need := []string{"413", "500"}
				if strings.HasPrefix(p, "/api/") && p != "/api/openapi.json" {
					need = append(need, "503")
				}
				if op.RequestBody != nil {
					need = append(need, "400", "415")
				}
				if !public[p] {
					need = append(need, "401")
				}
				if op.Security == nil || len(*op.Security) > 0 {
					if public[p] {
						t.Errorf("%s: is public in the contract but needs a token in the document", name)
					}
				} else if !public[p] {
					t.Errorf("%s: needs a token in the contract but is public in the document", name)
				}
				for _, status := range need {
					if op.Responses.Value(status) == nil {
						t.Errorf("%s: no %s answer documented", name, status)
					}
				}
				for status, ref := range op.Responses.Map() {
					r := ref.Value
					if r.Headers["X-Request-Id"] == nil {
						t.Errorf("%s %s: X-Request-Id not documented", name, status)
					}
					if strings.HasPrefix(p, "/api/") && r.Headers["Cache-Control"] == nil {
						t.Errorf("%s %s: Cache-Control not documented", name, status)
					}
					if status == "429" && r.Headers["Retry-After"] == nil {
						t.Errorf("%s %s: Retry-After not documented", name, status)
					}
					if status >= "400" && r.Content.Get("application/json") == nil {
						t.Errorf("%s %s: an error answer without a JSON body", name, status)
					}
				}
			}
		}
	})
}

// tbRecorder stands in for the test given to checkResponse, recording the
// failures it reports instead of failing the real test.
type tbRecorder struct {
	testing.TB
	failures []string
}

func (r *tbRecorder) Helper() {}
func (r *tbRecorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *tbRecorder) Error(args ...any) { r.failures = append(r.failures, fmt.Sprint(args...)) }
func (r *tbRecorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, "FATAL (checkResponse must not stop the test): "+fmt.Sprintf(format, args...))
}
func (r *tbRecorder) Fatal(args ...any) {
	r.failures = append(r.failures, "FATAL (checkResponse must not stop the test): "+fmt.Sprint(args...))
}
func (r *tbRecorder) Fail()    { r.failures = append(r.failures, "Fail") }
func (r *tbRecorder) FailNow() { r.failures = append(r.failures, "FailNow") }

// TestCheckResponseCatchesDrift proves that checkResponse is not a rubber
// stamp: answers as the contract shapes them pass, and each kind of drift
// (a missing field, a wrong type, an undeclared field, a wrong header...)
// fails, for the reason it names.
func TestCheckResponseCatchesDrift(t *testing.T) {
	t.Parallel()
	const (
		docID   = "019abcde-0000-7000-8000-000000000001"
		docPath = "/api/documentation/documents/" + docID
		ts      = "2026-11-25T10:04:05.123456Z"
	)
	document := func() map[string]any {
		return map[string]any{
			"id": docID, "title": "Release checklist", "content": "# Steps", "content_type": "markdown",
			"summary": "", "status": "draft", "visibility": "department", "folder_id": nil,
			"tags": []any{"release", "ops"}, "department_id": "019abcde-0000-7000-8000-0000000000d1",
			"project_id": nil, "owner": map[string]any{"id": "019abcde-0000-7000-8000-0000000000a1", "name": "Ada"},
			"version": 3, "created_at": "2026-11-24T09:00:00.000000Z", "updated_at": ts,
		}
	}
	with := func(m map[string]any, change func(map[string]any)) map[string]any { change(m); return m }
	user := map[string]any{
		"id": "019abcde-0000-7000-8000-0000000000a1", "email": "ada@example.com", "name": "Ada", "role": "editor",
		"roleLabel": "Editor", "department": nil, "departmentId": nil, "timezone": nil,
	}
	// hdr is the headers of an /api JSON answer, changed by key-value pairs
	// ("" as a value deletes the header).
	hdr := func(kv ...string) http.Header {
		h := http.Header{
			"Content-Type":           {"application/json"},
			"X-Request-Id":           {"3f2a9c81d0e4b5a6c7d8e9f0"},
			"Cache-Control":          {"no-store"},
			"X-Content-Type-Options": {"nosniff"},
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				h.Del(kv[i])
			} else {
				h.Set(kv[i], kv[i+1])
			}
		}
		return h
	}
	errBody := func(code, msg string) map[string]any { return map[string]any{"code": code, "message": msg} }
	cookie := "auth_token=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIz; Path=/; Max-Age=604800; HttpOnly; SameSite=Lax"
	login := map[string]any{"message": "Login successful", "accessToken": "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIz", "user": user}

	tests := []struct {
		name   string
		method string
		path   string
		status int
		header http.Header
		body   any // marshalled to JSON unless it is a string
		// wantFailure names what the failure must mention; "" means the
		// answer must pass.
		wantFailure string
	}{
		{name: "a document as the contract shapes it passes",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", `"3-1795601045123456"`),
			body: map[string]any{"document": document()}},
		{name: "a Content-Type with a charset passes",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", `"3-1"`, "Content-Type", "application/json; charset=utf-8"),
			body: map[string]any{"document": document()}},
		{name: "a list item without content passes",
			method: "GET", path: "/api/documentation/documents?page=2", status: 200, header: hdr(),
			body: map[string]any{
				"documents":  []any{with(document(), func(d map[string]any) { delete(d, "content") })},
				"pagination": map[string]any{"currentPage": 2, "limit": 20, "total": 21, "totalPages": 2, "hasMore": false},
			}},
		{name: "a user without department or timezone passes with nulls",
			method: "GET", path: "/api/auth/me", status: 200, header: hdr(), body: map[string]any{"user": user}},
		{name: "the login answer with its cookie passes",
			method: "POST", path: "/api/auth/login", status: 200, header: hdr("Set-Cookie", cookie), body: login},
		{name: "a validation error naming its fields passes",
			method: "POST", path: "/api/documentation/documents", status: 400, header: hdr(),
			body: map[string]any{"code": "VALIDATION_ERROR", "message": "Validation failed", "fields": map[string]any{"title": "is required"}}},
		{name: "a conflict carrying the current document passes",
			method: "PUT", path: docPath, status: 409, header: hdr(),
			body: map[string]any{"code": "DOCUMENT_CONFLICT", "message": "The document was changed by someone else",
				"updated_at": ts, "document": document()}},
		{name: "a 429 with Retry-After passes",
			method: "POST", path: "/api/auth/login", status: 429, header: hdr("Retry-After", "42"),
			body: errBody("TOO_MANY_ATTEMPTS", "Too many login attempts, please try again later.")},
		{name: "an unknown path answered 404 in the error shape passes",
			method: "GET", path: "/api/nothing-here", status: 404, header: hdr(), body: errBody("NOT_FOUND", "Not found")},
		{name: "an unknown path outside /api passes without Cache-Control",
			method: "GET", path: "/nothing-here", status: 404, header: hdr("Cache-Control", ""), body: errBody("NOT_FOUND", "Not found")},
		{name: "a known path with another method answered 405 with Allow passes",
			method: "PATCH", path: docPath, status: 405, header: hdr("Allow", "DELETE, GET, HEAD, PUT"),
			body: errBody("METHOD_NOT_ALLOWED", "Method PATCH is not allowed here")},
		{name: "HEAD of a GET operation passes with headers and no body",
			method: "HEAD", path: docPath, status: 200, header: hdr("ETag", `"3-1"`), body: ""},
		{name: "a redirect of an unclean path to its clean form passes",
			method: "GET", path: "/api//documentation/folders?x=1", status: 307,
			header: hdr("Location", "/api/documentation/folders?x=1", "Content-Type", ""), body: ""},
		{name: "metrics in the Prometheus text format pass",
			method: "GET", path: "/metrics", status: 200,
			header: hdr("Content-Type", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores", "Cache-Control", ""),
			body:   "# HELP quire_http_requests_total HTTP requests.\n"},
		{name: "readyz answering 503 UNAVAILABLE passes",
			method: "GET", path: "/readyz", status: 503, header: hdr("Cache-Control", ""),
			body: errBody("UNAVAILABLE", "The database is unreachable")},

		{name: "a document without updated_at fails",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", `"3-1"`),
			body:        map[string]any{"document": with(document(), func(d map[string]any) { delete(d, "updated_at") })},
			wantFailure: "updated_at"},
		{name: "a version number sent as a string fails",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", `"3-1"`),
			body:        map[string]any{"document": with(document(), func(d map[string]any) { d["version"] = "3" })},
			wantFailure: "version"},
		{name: "a null title fails",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", `"3-1"`),
			body:        map[string]any{"document": with(document(), func(d map[string]any) { d["title"] = nil })},
			wantFailure: "title"},
		{name: "a field the schema does not declare fails",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", `"3-1"`),
			body:        map[string]any{"document": with(document(), func(d map[string]any) { d["owner_email"] = "ada@example.com" })},
			wantFailure: "owner_email"},
		{name: "a status outside the enum fails",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", `"3-1"`),
			body:        map[string]any{"document": with(document(), func(d map[string]any) { d["status"] = "deleted" })},
			wantFailure: "status"},
		{name: "a timestamp without microseconds fails",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", `"3-1"`),
			body:        map[string]any{"document": with(document(), func(d map[string]any) { d["updated_at"] = "2026-11-25T10:04:05Z" })},
			wantFailure: "updated_at"},
		{name: "a timezone that is neither a string nor null fails",
			method: "GET", path: "/api/auth/me", status: 200, header: hdr(),
			body:        map[string]any{"user": with(maps.Clone(user), func(u map[string]any) { u["timezone"] = 1 })},
			wantFailure: "timezone"},
		{name: "a status the operation does not document fails",
			method: "GET", path: docPath, status: 201, header: hdr("ETag", `"3-1"`), body: map[string]any{"document": document()},
			wantFailure: "status is not supported"},
		{name: "an answer without X-Request-Id fails",
			method: "GET", path: "/api/auth/me", status: 200, header: hdr("X-Request-Id", ""), body: map[string]any{"user": user},
			wantFailure: "X-Request-Id"},
		{name: "an /api answer without Cache-Control fails",
			method: "GET", path: "/api/auth/me", status: 200, header: hdr("Cache-Control", ""), body: map[string]any{"user": user},
			wantFailure: "Cache-Control"},
		{name: "an /api answer without nosniff fails",
			method: "GET", path: "/api/auth/me", status: 200, header: hdr("X-Content-Type-Options", ""), body: map[string]any{"user": user},
			wantFailure: "X-Content-Type-Options"},
		{name: "a read without ETag fails",
			method: "GET", path: docPath, status: 200, header: hdr(), body: map[string]any{"document": document()},
			wantFailure: "ETag"},
		{name: "an error code the status does not allow there fails",
			method: "GET", path: docPath, status: 403, header: hdr(), body: errBody("CROSS_ORIGIN", "Cross-origin request refused"),
			wantFailure: "code"},
		{name: "a validation error without fields fails",
			method: "POST", path: "/api/documentation/folders", status: 400, header: hdr(),
			body: errBody("VALIDATION_ERROR", "Validation failed"), wantFailure: "fields"},
		{name: "a 500 that shows internal detail fails",
			method: "GET", path: "/api/documentation/folders", status: 500, header: hdr(),
			body: errBody("INTERNAL", "sql: database is locked"), wantFailure: "message"},
		{name: "a conflict without the current document fails",
			method: "PUT", path: docPath, status: 409, header: hdr(),
			body: map[string]any{"code": "DOCUMENT_CONFLICT", "message": "Changed", "updated_at": ts}, wantFailure: "document"},
		{name: "a 429 without Retry-After fails",
			method: "POST", path: "/api/auth/login", status: 429, header: hdr(),
			body: errBody("ACCOUNT_LOCKED", "Account is locked, please try again later."), wantFailure: "Retry-After"},
		{name: "a Retry-After that is not a number of seconds fails",
			method: "POST", path: "/api/auth/login", status: 429, header: hdr("Retry-After", "soon"),
			body: errBody("ACCOUNT_LOCKED", "Account is locked, please try again later."), wantFailure: "Retry-After"},
		{name: "a Retry-After of 0 seconds fails",
			method: "POST", path: "/api/auth/login", status: 429, header: hdr("Retry-After", "0"),
			body: errBody("ACCOUNT_LOCKED", "Account is locked, please try again later."), wantFailure: "Retry-After"},
		{name: "an ETag that is not quoted fails",
			method: "GET", path: docPath, status: 200, header: hdr("ETag", "3-1"), body: map[string]any{"document": document()},
			wantFailure: "ETag"},
		{name: "an /api answer with another Cache-Control fails",
			method: "GET", path: "/api/auth/me", status: 200, header: hdr("Cache-Control", "no-cache"), body: map[string]any{"user": user},
			wantFailure: "Cache-Control"},
		{name: "a login cookie without HttpOnly fails",
			method: "POST", path: "/api/auth/login", status: 200,
			header: hdr("Set-Cookie", strings.Replace(cookie, "; HttpOnly", "", 1)), body: login, wantFailure: "Set-Cookie"},
		{name: "an unknown path answered 200 fails",
			method: "GET", path: "/api/documentation/drafts", status: 200, header: hdr(), body: map[string]any{"drafts": []any{}},
			wantFailure: "404"},
		{name: "an unknown path answered 404 in another shape fails",
			method: "GET", path: "/api/nothing-here", status: 404, header: hdr(), body: map[string]any{"error": "not found"},
			wantFailure: "doesn't match"},
		{name: "a 405 without Allow fails",
			method: "PATCH", path: docPath, status: 405, header: hdr(),
			body: errBody("METHOD_NOT_ALLOWED", "Method PATCH is not allowed here"), wantFailure: "Allow"},
		{name: "a 405 whose Allow disagrees with the document fails",
			method: "PATCH", path: docPath, status: 405, header: hdr("Allow", "GET, HEAD, PATCH"),
			body: errBody("METHOD_NOT_ALLOWED", "Method PATCH is not allowed here"), wantFailure: "Allow"},
		{name: "a JSON answer sent as text/html fails",
			method: "GET", path: "/api/auth/me", status: 200, header: hdr("Content-Type", "text/html; charset=utf-8"),
			body: map[string]any{"user": user}, wantFailure: "text/html"},
		{name: "an empty body where JSON is due fails",
			method: "GET", path: "/api/auth/me", status: 200, header: hdr(), body: "", wantFailure: "body"},
		{name: "a HEAD answer with a body fails",
			method: "HEAD", path: docPath, status: 200, header: hdr("ETag", `"3-1"`), body: `{"document":{}}`,
			wantFailure: "HEAD"},
		{name: "a redirect of a path already clean fails",
			method: "GET", path: "/api/documentation/folders", status: 307,
			header: hdr("Location", "/api/documentation/folders/", "Content-Type", ""), body: "", wantFailure: "redirect"},
	}
	answer := func(t *testing.T, method, path string, body any) (*http.Request, []byte) {
		t.Helper()
		b, ok := body.(string)
		raw := []byte(b)
		if !ok {
			var err error
			if raw, err = json.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
		req, err := http.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return req, raw
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, body := answer(t, tt.method, tt.path, tt.body)
			rec := &tbRecorder{TB: t}
			checkResponse(rec, req, tt.status, tt.header, body)
			got := strings.Join(rec.failures, "\n")
			switch {
			case tt.wantFailure == "" && got != "":
				t.Errorf("checkResponse refused an answer the contract allows:\n%s", got)
			case tt.wantFailure != "" && got == "":
				t.Errorf("checkResponse let drift through (want a failure about %q)", tt.wantFailure)
			case tt.wantFailure != "" && !strings.Contains(got, tt.wantFailure):
				t.Errorf("checkResponse failed, but not about %q:\n%s", tt.wantFailure, got)
			}
			if testing.Verbose() && got != "" {
				t.Logf("checkResponse reported:\n%s", got)
			}
		})
	}

	// The harness checks answers from parallel tests: the same answers,
	// checked from many goroutines at once (run with -race), pass and fail
	// as they do one at a time.
	t.Run("answers checked concurrently are judged as one at a time", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 4 {
			for _, tt := range tests {
				req, body := answer(t, tt.method, tt.path, tt.body)
				wg.Go(func() {
					rec := &tbRecorder{TB: t}
					checkResponse(rec, req, tt.status, tt.header, body)
					if failed := len(rec.failures) > 0; failed != (tt.wantFailure != "") {
						t.Errorf("%s: failed=%t when checked concurrently", tt.name, failed)
					}
				})
			}
		}
		wg.Wait()
	})
}
