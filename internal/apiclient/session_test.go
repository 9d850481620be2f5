//go:build apiclient

// This file is built only by TestGeneratedClient (generate_test.go), which
// generates the client from httpapi/openapi.json into this package (an
// overlay: nothing is written to the tree) and runs it with -tags apiclient.

package apiclient_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"

	// What generated code imports: named here so that go mod tidy, which
	// does not see the generated file, keeps the module in go.mod.
	_ "github.com/oapi-codegen/runtime"
	_ "github.com/oapi-codegen/runtime/types"

	"quire/attachments"
	"quire/audit"
	"quire/auth"
	"quire/comments"
	"quire/documents"
	"quire/httpapi"
	"quire/idempotency"
	"quire/internal/apiclient"
	"quire/notify"
	"quire/passkey"
	"quire/sqlite"
	"quire/transfer"
	"quire/webhook"
)

const password = "correct horse battery staple 42"

// TestSession drives a short session through the generated client against
// a real server on a SQLite file: sign in, create, list, search, a stale
// update answered 409 with the current document, versions, restore.
func TestSession(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "quire.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	logger := slog.New(slog.DiscardHandler)
	as, err := auth.New(store, auth.DefaultConfig(), logger)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := as.CreateUser(ctx, auth.NewUser{Email: "ada@example.com", Name: "Ada", Role: "editor", Password: password}); err != nil {
		t.Fatal(err)
	}
	ds := documents.New(store, documents.Config{})
	files := attachments.New(store, attachments.Config{})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{}, store, httpapi.Services{
		Auth: as, Documents: ds, Attachments: files,
		Audit:       audit.New(store, nil),
		Idempotency: idempotency.New(store, idempotency.Config{}),
		Webhooks:    webhook.New(store, webhook.Config{}),
		Transfer:    transfer.New(ds, files, "http://quire.test"),
		Passkeys:    passkey.New(store, as, logger),
		Comments:    comments.New(store, comments.Config{}),
		Notify:      notify.New(store, notify.Config{}),
	}, logger))
	defer srv.Close()

	c, err := apiclient.NewClientWithResponses(srv.URL)
	if err != nil {
		t.Fatal(err)
	}

	login, err := c.LoginWithResponse(ctx, apiclient.LoginJSONRequestBody{Email: "ada@example.com", Password: password})
	if err != nil || login.JSON200 == nil {
		t.Fatalf("sign in: %v, %s", err, show(login))
	}
	// The answer is a session, or (with a second factor on) the request
	// for a code: this user has none.
	signedIn, err := login.JSON200.AsLoginResult()
	if err != nil || signedIn.AccessToken == "" {
		t.Fatalf("sign in: %v, %s", err, show(login))
	}
	bearer := func(ctx context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+signedIn.AccessToken)
		return nil
	}
	if signedIn.User.Email != "ada@example.com" {
		t.Errorf("signed in as %q", signedIn.User.Email)
	}

	content := "Where the rivers meet the heron waits."
	created, err := c.CreateDocumentWithResponse(ctx, nil, apiclient.DocumentCreate{Title: "Field notes", Content: &content}, bearer)
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create: %v, %s", err, show(created))
	}
	doc := created.JSON201.Document
	if doc.Version != 1 || doc.Status != "draft" || doc.Visibility != "private" {
		t.Errorf("created version %d, %s, %s; want 1, the default draft and private", doc.Version, doc.Status, doc.Visibility)
	}

	list, err := c.ListDocumentsWithResponse(ctx, &apiclient.ListDocumentsParams{}, bearer)
	if err != nil || list.JSON200 == nil {
		t.Fatalf("list: %v, %s", err, show(list))
	}
	if len(list.JSON200.Documents) != 1 || list.JSON200.Pagination.Total != 1 {
		t.Errorf("list: %d documents, total %d; want the one", len(list.JSON200.Documents), list.JSON200.Pagination.Total)
	}

	search := "heron"
	found, err := c.ListDocumentsWithResponse(ctx, &apiclient.ListDocumentsParams{Search: &search}, bearer)
	if err != nil || found.JSON200 == nil {
		t.Fatalf("search: %v, %s", err, show(found))
	}
	if len(found.JSON200.Documents) != 1 || found.JSON200.Documents[0].Id != doc.Id {
		t.Errorf("search for %q found %d documents", search, len(found.JSON200.Documents))
	}

	title := "Field notes, revised"
	updated, err := c.UpdateDocumentWithResponse(ctx, doc.Id, nil,
		apiclient.DocumentUpdate{BaseUpdatedAt: &doc.UpdatedAt, Title: &title}, bearer)
	if err != nil || updated.JSON200 == nil {
		t.Fatalf("update: %v, %s", err, show(updated))
	}
	current := updated.JSON200.Document

	stale := "Lost edit"
	conflict, err := c.UpdateDocumentWithResponse(ctx, doc.Id, nil,
		apiclient.DocumentUpdate{BaseUpdatedAt: &doc.UpdatedAt, Title: &stale}, bearer)
	if err != nil || conflict.JSON409 == nil {
		t.Fatalf("stale update: %v, %s; want 409", err, show(conflict))
	}
	ce, err := conflict.JSON409.AsConflictError()
	if err != nil {
		t.Fatalf("409 body as ConflictError: %v", err)
	}
	if ce.Code != "DOCUMENT_CONFLICT" || ce.Document.Title != title || ce.Document.Version != current.Version ||
		!ce.UpdatedAt.Equal(current.UpdatedAt) {
		t.Errorf("conflict %s: document %q version %d at %v; want the current %q version %d at %v",
			ce.Code, ce.Document.Title, ce.Document.Version, ce.UpdatedAt, title, current.Version, current.UpdatedAt)
	}

	versions, err := c.ListVersionsWithResponse(ctx, doc.Id, bearer)
	if err != nil || versions.JSON200 == nil {
		t.Fatalf("versions: %v, %s", err, show(versions))
	}
	if len(versions.JSON200.Versions) != 2 {
		t.Fatalf("%d versions, want 2", len(versions.JSON200.Versions))
	}

	restored, err := c.RestoreVersionWithResponse(ctx, doc.Id, 1, nil,
		apiclient.RestoreRequest{BaseUpdatedAt: &current.UpdatedAt}, bearer)
	if err != nil || restored.JSON200 == nil {
		t.Fatalf("restore: %v, %s", err, show(restored))
	}
	if got := restored.JSON200.Document; got.Title != "Field notes" || got.Version != 3 {
		t.Errorf("restored %q version %d; want the first title as version 3", got.Title, got.Version)
	}
}

// show is the status and body of a generated response, for a failure.
func show(r any) string {
	v := reflect.ValueOf(r)
	if v.IsNil() {
		return "no response"
	}
	res := v.Elem().FieldByName("HTTPResponse").Interface().(*http.Response)
	return fmt.Sprintf("%d %s", res.StatusCode, v.Elem().FieldByName("Body").Bytes())
}
