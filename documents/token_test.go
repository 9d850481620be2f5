package documents_test

import (
	"context"
	"testing"
	"time"

	"quire"
	"quire/documents"
)

// TestTokenScope: the service itself caps an actor that called with a read
// API token to reading, whatever its role, so that no route that forgot the
// HTTP layer's check could let one write.
func TestTokenScope(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	alice := w.actor("alice@example.com", "editor", "Engineering", false)
	d, err := w.svc.Create(ctx, alice, documents.DocumentInput{Title: documents.Some("Plan")})
	if err != nil {
		t.Fatal(err)
	}
	read := alice
	read.TokenID, read.Scope = "0190b2a4-0000-7000-8000-000000000001", quire.ScopeRead
	write := alice
	write.TokenID, write.Scope = "0190b2a4-0000-7000-8000-000000000002", quire.ScopeWrite

	if _, err := w.svc.Get(ctx, read, d.ID); err != nil {
		t.Errorf("read token reads: %v", err)
	}
	_, err = w.svc.Create(ctx, read, documents.DocumentInput{Title: documents.Some("No")})
	wantCode(t, err, quire.EFORBIDDEN)
	_, err = w.svc.Update(ctx, read, d.ID, documents.DocumentInput{Title: documents.Some("No")}, time.Time{})
	wantCode(t, err, quire.EFORBIDDEN)
	wantCode(t, w.svc.Delete(ctx, read, d.ID), quire.EFORBIDDEN)
	_, err = w.svc.CreateFolder(ctx, read, documents.FolderInput{Name: documents.Some("No")})
	wantCode(t, err, quire.EFORBIDDEN)

	if _, err := w.svc.Update(ctx, write, d.ID, documents.DocumentInput{Title: documents.Some("Plan 2")}, time.Time{}); err != nil {
		t.Errorf("write token of an editor writes: %v", err)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := codeOf(err); got != code {
		t.Errorf("error %v (code %q), want %s", err, got, code)
	}
}
