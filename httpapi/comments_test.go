package httpapi

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/internal/sqlitetest"
	"quire/sqlite"
	"quire/webhook"
)

type anchorWire struct {
	Quote  string `json:"quote"`
	Prefix string `json:"prefix"`
	Suffix string `json:"suffix"`
	State  string `json:"state"`
}

type reactionWire struct {
	Emoji string `json:"emoji"`
	Count int    `json:"count"`
	Mine  bool   `json:"mine"`
}

// commentWire is COMMENT; Replies is set on the threads of a list only.
type commentWire struct {
	ID         string         `json:"id"`
	DocumentID string         `json:"document_id"`
	ParentID   *string        `json:"parent_id"`
	Author     personWire     `json:"author"`
	Body       string         `json:"body"`
	BodyHTML   string         `json:"body_html"`
	Anchor     *anchorWire    `json:"anchor"`
	CreatedAt  string         `json:"created_at"`
	UpdatedAt  string         `json:"updated_at"`
	Edited     bool           `json:"edited"`
	Deleted    bool           `json:"deleted"`
	ResolvedAt *string        `json:"resolved_at"`
	ResolvedBy *personWire    `json:"resolved_by"`
	Reactions  []reactionWire `json:"reactions"`
	Replies    []commentWire  `json:"replies"`
}

type threadsWire struct {
	Threads    []commentWire `json:"threads"`
	Pagination struct {
		CurrentPage int  `json:"currentPage"`
		Limit       int  `json:"limit"`
		Total       int  `json:"total"`
		TotalPages  int  `json:"totalPages"`
		HasMore     bool `json:"hasMore"`
	} `json:"pagination"`
}

const commentsPath = "/api/documentation/comments"

func docCommentsPath(docID string) string { return docsPath + "/" + docID + "/comments" }

// postComment comments on docID as the holder of tok, failing unless 201.
func (e *env) postComment(tok, docID string, body map[string]any) commentWire {
	e.t.Helper()
	return wantMember[commentWire](e.t, e.do("POST", docCommentsPath(docID), bearer(tok), jsonBody(body)), http.StatusCreated, "comment")
}

// threads lists docID's threads with query as the holder of tok.
func (e *env) threads(tok, docID, query string) threadsWire {
	e.t.Helper()
	return wantBody[threadsWire](e.t, e.do("GET", docCommentsPath(docID)+"?"+query, bearer(tok)), http.StatusOK)
}

// bodies are the bodies of threads, each followed by its replies' in
// brackets.
func bodies(l threadsWire) []string {
	out := []string{}
	for _, t := range l.Threads {
		s := t.Body
		for _, r := range t.Replies {
			s += " [" + r.Body + "]"
		}
		out = append(out, s)
	}
	return out
}

// wantField checks that r is a VALIDATION_ERROR naming field.
func (e *env) wantField(r *resp, field string) {
	e.t.Helper()
	body := e.wantError(r, http.StatusBadRequest, quire.EVALIDATION)
	if fields, _ := body["fields"].(map[string]any); fields[field] == nil {
		e.t.Errorf("refusal %v does not name %s", body, field)
	}
}

// unknownID is an id of the form quire issues that names nothing.
const unknownID = "0190b2a4-0000-7000-8000-000000000000"

// TestComments walks one document's comments through every route as the
// people of section 18 do: a viewer comments on a passage, an editor on
// the page, the owner replies; edits, resolves, reacts, deletes; and each
// refusal leaves nothing behind.
func TestComments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ada := e.login(e.user("ada@example.com", "editor", "").Email) // the document's owner
	bob := e.login(e.user("bob@example.com", "editor", "").Email)
	vicUser := e.user("vic@example.com", "viewer", "")
	vic := e.login(vicUser.Email)
	root := e.login(e.user("root@example.com", "admin", "").Email)
	guest := e.login(e.user("guest@example.com", "guest", "").Email)
	_, readToken := e.newAPIToken(vic, "reader", "read")
	_, writeToken := e.newAPIToken(vic, "writer", "write")

	doc := decodeDoc(t, e.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "Plan", "visibility": "public",
		"content": "# Plan\n\nAlpha   beta *gamma*.\n\nDelta gamma epsilon."})))
	other := decodeDoc(t, e.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "Other", "visibility": "public", "content": "x"})))
	otherComment := e.postComment(ada, other.ID, map[string]any{"body": "elsewhere"})

	var gamma, page, alpha, reply commentWire
	t.Run("a viewer comments on a passage that its prefix picks among two", func(t *testing.T) {
		e := e.withT(t)
		e.clock.Advance(time.Second)
		gamma = e.postComment(vic, doc.ID, map[string]any{"body": "  Which **gamma**?\n", "anchor": map[string]any{
			"quote": "gamma", "prefix": "Delta\n  ", "suffix": " epsilon"}})
		want := commentWire{ID: gamma.ID, DocumentID: doc.ID, Author: personWire{ID: vicUser.ID, Name: "Vic"},
			Body: "Which **gamma**?", BodyHTML: gamma.BodyHTML,
			Anchor:    &anchorWire{Quote: "gamma", Prefix: "Delta ", Suffix: " epsilon", State: quire.AnchorAttached},
			CreatedAt: formatTime(e.clock.Now()), UpdatedAt: formatTime(e.clock.Now()), Reactions: []reactionWire{}}
		if diff := cmp.Diff(want, gamma); diff != "" {
			t.Errorf("created comment (-want +got):\n%s", diff)
		}
		if !strings.Contains(gamma.BodyHTML, "<strong>gamma</strong>") {
			t.Errorf("body_html %q: the Markdown is not rendered", gamma.BodyHTML)
		}
	})
	t.Run("an editor comments on the page, the owner on an earlier passage and replies", func(t *testing.T) {
		e := e.withT(t)
		e.clock.Advance(time.Second)
		page = e.postComment(bob, doc.ID, map[string]any{"body": "Page note", "anchor": nil})
		if page.Anchor != nil || page.ParentID != nil {
			t.Errorf("page comment %+v", page)
		}
		alpha = e.postComment(ada, doc.ID, map[string]any{"body": "On alpha", "anchor": map[string]any{"quote": "Alpha beta"}})
		reply = e.postComment(ada, doc.ID, map[string]any{"body": "Reply", "parent_id": gamma.ID})
		// A reply to a reply joins the root's thread.
		deeper := e.postComment(writeToken, doc.ID, map[string]any{"body": "Deeper", "parent_id": reply.ID})
		if reply.ParentID == nil || *reply.ParentID != gamma.ID || deeper.ParentID == nil || *deeper.ParentID != gamma.ID {
			t.Errorf("reply's parent %v, deeper's %v, want %s", reply.ParentID, deeper.ParentID, gamma.ID)
		}
	})
	t.Run("threads are listed in the order of their quotes, then page comments", func(t *testing.T) {
		e := e.withT(t)
		l := e.threads(vic, doc.ID, "")
		if diff := cmp.Diff([]string{"On alpha", "Which **gamma**? [Reply] [Deeper]", "Page note"}, bodies(l)); diff != "" {
			t.Errorf("threads (-want +got):\n%s", diff)
		}
		if l.Pagination.Total != 3 || l.Pagination.CurrentPage != 1 || l.Pagination.Limit != 20 || l.Pagination.HasMore {
			t.Errorf("pagination %+v", l.Pagination)
		}
		l = e.threads(vic, doc.ID, "limit=1&page=2")
		if diff := cmp.Diff([]string{"Which **gamma**? [Reply] [Deeper]"}, bodies(l)); diff != "" || l.Pagination.TotalPages != 3 || !l.Pagination.HasMore {
			t.Errorf("second page of one: %v %+v", bodies(l), l.Pagination)
		}
	})

	// count is the number of comments of doc, replies included.
	count := func(t *testing.T) int {
		l := e.withT(t).threads(ada, doc.ID, "status=all&limit=100")
		n := 0
		for _, th := range l.Threads {
			n += 1 + len(th.Replies)
		}
		return n
	}
	t.Run("every bad comment is refused, naming its field, and nothing is written", func(t *testing.T) {
		e := e.withT(t)
		before := count(t)
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{}, "body"},
			{map[string]any{"body": " \n\t "}, "body"},
			{map[string]any{"body": 42}, "body"},
			{map[string]any{"body": strings.Repeat("é", quire.MaxCommentBody+1)}, "body"},
			{map[string]any{"body": "x", "anchor": map[string]any{"quote": "not in the text"}}, "anchor"},
			{map[string]any{"body": "x", "anchor": map[string]any{"quote": " \n "}}, "anchor"},
			{map[string]any{"body": "x", "anchor": map[string]any{"prefix": "Alpha"}}, "anchor"},
			{map[string]any{"body": "x", "anchor": map[string]any{"quote": strings.Repeat("a", quire.MaxQuote+1)}}, "anchor"},
			{map[string]any{"body": "x", "anchor": "gamma"}, "anchor"},
			{map[string]any{"body": "x", "parent_id": gamma.ID, "anchor": map[string]any{"quote": "gamma"}}, "anchor"},
			{map[string]any{"body": "x", "parent_id": unknownID}, "parent_id"},
			{map[string]any{"body": "x", "parent_id": "nope"}, "parent_id"},
			{map[string]any{"body": "x", "parent_id": otherComment.ID}, "parent_id"},
		} {
			e.wantField(e.do("POST", docCommentsPath(doc.ID), bearer(vic), jsonBody(c.body)), c.field)
		}
		e.wantError(e.do("POST", docCommentsPath(doc.ID), bearer(vic), rawBody("{"), header("Content-Type", "application/json")),
			http.StatusBadRequest, quire.EINVALIDJSON)
		e.wantError(e.do("POST", docCommentsPath(doc.ID), bearer(readToken), jsonBody(map[string]any{"body": "x"})),
			http.StatusForbidden, quire.EFORBIDDEN)
		e.wantError(e.do("POST", docCommentsPath(doc.ID), bearer(guest), jsonBody(map[string]any{"body": "x"})),
			http.StatusForbidden, quire.EFORBIDDEN)
		e.wantError(e.do("GET", docCommentsPath(doc.ID), bearer(guest)), http.StatusForbidden, quire.EFORBIDDEN)
		e.wantError(e.do("POST", docCommentsPath(unknownID), bearer(vic), jsonBody(map[string]any{"body": "x"})),
			http.StatusNotFound, quire.ENOTFOUND)
		e.wantError(e.do("GET", docCommentsPath(unknownID), bearer(vic)), http.StatusNotFound, quire.ENOTFOUND)
		for _, q := range []string{"status=closed", "status=OPEN", "page=0", "limit=x"} {
			field, _, _ := strings.Cut(q, "=")
			e.wantField(e.do("GET", docCommentsPath(doc.ID)+"?"+q, bearer(vic)), field)
		}
		if after := count(t); after != before {
			t.Errorf("refusals wrote comments: %d, then %d", before, after)
		}
		// The limits themselves are taken.
		long := e.postComment(vic, doc.ID, map[string]any{"body": strings.Repeat("é", quire.MaxCommentBody)})
		e.wantMessageOf(e.do("DELETE", commentsPath+"/"+long.ID, bearer(vic)), "Comment deleted")
	})
	t.Run("a read token lists, a write token comments", func(t *testing.T) {
		e := e.withT(t)
		if l := e.threads(readToken, doc.ID, "status=all"); len(l.Threads) != 3 {
			t.Errorf("read token lists %v", bodies(l))
		}
		for _, c := range []struct{ method, path string }{
			{"PATCH", "/" + gamma.ID}, {"DELETE", "/" + gamma.ID}, {"POST", "/" + gamma.ID + "/resolve"},
			{"POST", "/" + gamma.ID + "/reopen"}, {"PUT", "/" + gamma.ID + "/reactions/%F0%9F%91%8D"},
			{"DELETE", "/" + gamma.ID + "/reactions/%F0%9F%91%8D"},
		} {
			e.wantError(e.do(c.method, commentsPath+c.path, bearer(readToken), jsonBody(map[string]any{"body": "x"})),
				http.StatusForbidden, quire.EFORBIDDEN)
		}
	})
	t.Run("only its author edits a comment", func(t *testing.T) {
		e := e.withT(t)
		for _, tok := range []string{bob, ada, root} {
			e.wantError(e.do("PATCH", commentsPath+"/"+gamma.ID, bearer(tok), jsonBody(map[string]any{"body": "mine now"})),
				http.StatusForbidden, quire.EFORBIDDEN)
		}
		e.wantField(e.do("PATCH", commentsPath+"/"+gamma.ID, bearer(vic), jsonBody(map[string]any{"body": " "})), "body")
		e.wantField(e.do("PATCH", commentsPath+"/"+gamma.ID, bearer(vic), jsonBody(map[string]any{})), "body")
		e.clock.Advance(time.Minute)
		got := wantMember[commentWire](t, e.do("PATCH", commentsPath+"/"+gamma.ID, bearer(vic),
			jsonBody(map[string]any{"body": "Which gamma, the second?"})), http.StatusOK, "comment")
		if got.Body != "Which gamma, the second?" || !got.Edited || got.UpdatedAt != formatTime(e.clock.Now()) ||
			got.CreatedAt != gamma.CreatedAt {
			t.Errorf("edited %+v", got)
		}
		gamma = got
	})
	t.Run("its author, a writer or an administrator resolves and reopens a thread", func(t *testing.T) {
		e := e.withT(t)
		e.clock.Advance(time.Minute)
		got := wantMember[commentWire](t, e.do("POST", commentsPath+"/"+gamma.ID+"/resolve", bearer(vic)), http.StatusOK, "comment")
		if got.ResolvedAt == nil || *got.ResolvedAt != formatTime(e.clock.Now()) || got.ResolvedBy == nil ||
			got.ResolvedBy.ID != vicUser.ID {
			t.Fatalf("resolved %+v", got)
		}
		// Resolving again changes nothing.
		again := wantMember[commentWire](t, e.do("POST", commentsPath+"/"+gamma.ID+"/resolve", bearer(root)), http.StatusOK, "comment")
		if again.ResolvedBy == nil || again.ResolvedBy.ID != vicUser.ID {
			t.Errorf("resolved again %+v", again)
		}
		if diff := cmp.Diff([]string{"On alpha", "Page note"}, bodies(e.threads(vic, doc.ID, "status=open"))); diff != "" {
			t.Errorf("open threads (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"Which gamma, the second? [Reply] [Deeper]"}, bodies(e.threads(vic, doc.ID, "status=resolved"))); diff != "" {
			t.Errorf("resolved threads (-want +got):\n%s", diff)
		}
		if n := len(e.threads(vic, doc.ID, "status=all").Threads); n != 3 {
			t.Errorf("all: %d threads", n)
		}
		// A viewer who did not start it may not; a writer may.
		e.wantError(e.do("POST", commentsPath+"/"+page.ID+"/resolve", bearer(vic)), http.StatusForbidden, quire.EFORBIDDEN)
		e.wantError(e.do("POST", commentsPath+"/"+gamma.ID+"/reopen", bearer(vic+"x")), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		got = wantMember[commentWire](t, e.do("POST", commentsPath+"/"+gamma.ID+"/reopen", bearer(bob)), http.StatusOK, "comment")
		if got.ResolvedAt != nil || got.ResolvedBy != nil {
			t.Errorf("reopened %+v", got)
		}
		wantMember[commentWire](t, e.do("POST", commentsPath+"/"+page.ID+"/resolve", bearer(root)), http.StatusOK, "comment")
		wantMember[commentWire](t, e.do("POST", commentsPath+"/"+page.ID+"/reopen", bearer(ada)), http.StatusOK, "comment")
		e.wantField(e.do("POST", commentsPath+"/"+reply.ID+"/resolve", bearer(ada)), "id")
	})
	t.Run("reactions come from the set, once per person", func(t *testing.T) {
		e := e.withT(t)
		put := func(tok, emoji string) commentWire {
			return wantMember[commentWire](t, e.do("PUT", commentsPath+"/"+alpha.ID+"/reactions/"+url.PathEscape(emoji), bearer(tok)),
				http.StatusOK, "comment")
		}
		put(vic, "👍")
		put(vic, "👍")
		put(bob, "👍")
		got := put(vic, "\u2764") // ❤ without its presentation selector is ❤️
		want := []reactionWire{{"👍", 2, true}, {"❤️", 1, true}}
		if diff := cmp.Diff(want, got.Reactions); diff != "" {
			t.Errorf("reactions (-want +got):\n%s", diff)
		}
		got = wantMember[commentWire](t, e.do("DELETE", commentsPath+"/"+alpha.ID+"/reactions/"+url.PathEscape("👍"), bearer(vic)),
			http.StatusOK, "comment")
		if diff := cmp.Diff([]reactionWire{{"👍", 1, false}, {"❤️", 1, true}}, got.Reactions); diff != "" {
			t.Errorf("after taking one back (-want +got):\n%s", diff)
		}
		// As another reader sees them.
		for _, th := range e.threads(bob, doc.ID, "").Threads {
			if th.ID == alpha.ID {
				if diff := cmp.Diff([]reactionWire{{"👍", 1, true}, {"❤️", 1, false}}, th.Reactions); diff != "" {
					t.Errorf("bob's view (-want +got):\n%s", diff)
				}
			}
		}
		for _, bad := range []string{"🙂", "x", "%F0%9F"} {
			e.wantField(e.do("PUT", commentsPath+"/"+alpha.ID+"/reactions/"+bad, bearer(vic)), "emoji")
		}
	})
	t.Run("its author, the document's owner or an administrator deletes a comment", func(t *testing.T) {
		e := e.withT(t)
		e.wantError(e.do("DELETE", commentsPath+"/"+gamma.ID, bearer(bob)), http.StatusForbidden, quire.EFORBIDDEN)
		e.wantMessageOf(e.do("DELETE", commentsPath+"/"+gamma.ID, bearer(vic)), "Comment deleted")
		// A root with replies stays as a placeholder.
		var placeholder *commentWire
		for _, th := range e.threads(vic, doc.ID, "").Threads {
			if th.ID == gamma.ID {
				placeholder = &th
			}
		}
		if placeholder == nil || !placeholder.Deleted || placeholder.Body != "" || placeholder.BodyHTML != "" || len(placeholder.Replies) != 2 {
			t.Fatalf("deleted root %+v", placeholder)
		}
		e.wantError(e.do("PATCH", commentsPath+"/"+gamma.ID, bearer(vic), jsonBody(map[string]any{"body": "back"})), http.StatusNotFound, quire.ENOTFOUND)
		e.wantError(e.do("DELETE", commentsPath+"/"+gamma.ID, bearer(vic)), http.StatusNotFound, quire.ENOTFOUND)
		// Its last reply takes it along: the owner deletes one, an
		// administrator the other.
		e.wantMessageOf(e.do("DELETE", commentsPath+"/"+placeholder.Replies[0].ID, bearer(ada)), "Comment deleted")
		e.wantMessageOf(e.do("DELETE", commentsPath+"/"+placeholder.Replies[1].ID, bearer(root)), "Comment deleted")
		if diff := cmp.Diff([]string{"On alpha", "Page note"}, bodies(e.threads(vic, doc.ID, "status=all"))); diff != "" {
			t.Errorf("after the last reply (-want +got):\n%s", diff)
		}
		for _, c := range []struct{ method, path string }{
			{"PATCH", ""}, {"DELETE", ""}, {"POST", "/resolve"}, {"POST", "/reopen"}, {"PUT", "/reactions/%F0%9F%91%8D"},
			{"DELETE", "/reactions/%F0%9F%91%8D"},
		} {
			e.wantError(e.do(c.method, commentsPath+"/"+gamma.ID+c.path, bearer(root), jsonBody(map[string]any{"body": "x"})),
				http.StatusNotFound, quire.ENOTFOUND)
		}
	})
	t.Run("the changes are in the audit log, never the bodies", func(t *testing.T) {
		e := e.withT(t)
		log, raw := e.audit(t, root, url.Values{"action": {"comment."}, "limit": {"200"}})
		counts := map[string]int{}
		for _, ev := range log.Events {
			counts[ev.Action]++
			if ev.Target == nil || ev.Target.Type != quire.TargetDocument || ev.Details["document_id"] != ev.Target.ID ||
				ev.Details["comment_id"] == nil || ev.Details["comment_id"] == "" {
				t.Errorf("event %+v", ev)
			}
		}
		want := map[string]int{quire.ActionCommentCreated: 7, quire.ActionCommentUpdated: 1, quire.ActionCommentResolved: 2,
			quire.ActionCommentReopened: 2, quire.ActionCommentDeleted: 4}
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		for _, body := range []string{"gamma, the second", "Page note", "On alpha", "Deeper"} {
			if strings.Contains(string(raw), body) {
				t.Errorf("the audit log holds the body %q", body)
			}
		}
		created := map[string]bool{}
		for _, ev := range log.Events {
			if ev.Action == quire.ActionCommentCreated {
				created[fmt.Sprint(ev.Details["comment_id"])] = true
			}
		}
		for _, c := range []commentWire{gamma, page, alpha, reply} {
			if !created[c.ID] {
				t.Errorf("no comment.created names %s", c.ID)
			}
		}
	})
	t.Run("a create retried with its Idempotency-Key is answered once", func(t *testing.T) {
		e := e.withT(t)
		before := count(t)
		first := e.do("POST", docCommentsPath(doc.ID), bearer(bob), idemKey("c-1"), jsonBody(map[string]any{"body": "Once"}))
		again := e.do("POST", docCommentsPath(doc.ID), bearer(bob), idemKey("c-1"), jsonBody(map[string]any{"body": "Once"}))
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(first.Body) != string(again.Body) ||
			again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		if after := count(t); after != before+1 {
			t.Errorf("%d comments, then %d", before, after)
		}
	})
}

// wantMessageOf checks that r is 200 {"message": msg}.
func (e *env) wantMessageOf(r *resp, msg string) {
	e.t.Helper()
	wantMessage(e.t, r, msg)
}

// TestCommentVisibilityMatrix applies the visibility of section 5 to every
// comment route: for a document of each visibility, its owner, an editor
// who is in neither its department nor its project, and an administrator.
// Whoever cannot see the document gets 404 with the very body of an
// unknown id; whoever sees it the rules of section 18.
func TestCommentVisibilityMatrix(t *testing.T) {
	t.Parallel()
	fx := newDocsFixture(t)
	owner := fx.person("owner@example.com", "editor", "Engineering", true)
	other := fx.person("other@example.com", "editor", "Sales", false)
	admin := fx.person("admin@example.com", "admin", "", false)
	callers := []struct{ name, tok string }{{"owner", owner}, {"other", other}, {"admin", admin}}
	e := fx.env

	// Each cell: owner | other | admin.
	matrix := []struct {
		route                                string
		private, department, project, public string
	}{
		{"create", "201 404 201", "201 404 201", "201 404 201", "201 201 201"},
		{"list", "200 404 200", "200 404 200", "200 404 200", "200 200 200"},
		{"edit", "200 404 403", "200 404 403", "200 404 403", "200 403 403"},
		{"resolve", "200 404 200", "200 404 200", "200 404 200", "200 200 200"},
		{"reopen", "200 404 200", "200 404 200", "200 404 200", "200 200 200"},
		{"react", "200 404 200", "200 404 200", "200 404 200", "200 200 200"},
		{"unreact", "200 404 200", "200 404 200", "200 404 200", "200 200 200"},
		{"delete", "200 404 200", "200 404 200", "200 404 200", "200 403 200"},
	}
	docs := map[string]docWire{}
	for _, vis := range []string{"private", "department", "project", "public"} {
		body := map[string]any{"title": vis, "content": "Some text to quote.", "visibility": vis}
		if vis == "project" {
			body["project_id"] = fx.project
		}
		docs[vis] = fx.create(owner, body)
	}
	// unknown answers each route for an id that names nothing.
	unknown := func(route string) []*resp {
		return []*resp{cellRequest(e, route, admin, unknownID, unknownID), cellRequest(e, route, admin, "nope", "nope")}
	}
	for _, row := range matrix {
		t.Run(row.route, func(t *testing.T) {
			e := e.withT(t)
			for vis, cells := range map[string]string{"private": row.private, "department": row.department,
				"project": row.project, "public": row.public} {
				want := strings.Fields(cells)
				d := docs[vis]
				for i, c := range callers {
					// The owner's thread, fresh for each cell.
					th := e.postComment(owner, d.ID, map[string]any{"body": "Thread", "anchor": map[string]any{"quote": "text"}})
					r := cellRequest(e, row.route, c.tok, d.ID, th.ID)
					if got := fmt.Sprint(r.Status); got != want[i] {
						t.Errorf("%s by %s on a %s document: %s, want %s (%s)", row.route, c.name, vis, got, want[i], r.Body)
						continue
					}
					if r.Status == http.StatusNotFound {
						for _, u := range unknown(row.route) {
							if string(u.Body) != string(r.Body) {
								t.Errorf("%s by %s on a %s document: 404 %s, but an unknown id's is %d %s", row.route, c.name, vis, r.Body, u.Status, u.Body)
							}
						}
					}
				}
			}
		})
	}
}

// cellRequest makes the request of a route of the visibility matrix as
// the holder of tok, on document docID and comment id.
func cellRequest(e *env, route, tok, docID, id string) *resp {
	thumbs := "/reactions/" + url.PathEscape("👍")
	switch route {
	case "create":
		return e.do("POST", docCommentsPath(docID), bearer(tok), jsonBody(map[string]any{"body": "Hello", "parent_id": id}))
	case "list":
		return e.do("GET", docCommentsPath(docID), bearer(tok))
	case "edit":
		return e.do("PATCH", commentsPath+"/"+id, bearer(tok), jsonBody(map[string]any{"body": "Edited"}))
	case "resolve":
		return e.do("POST", commentsPath+"/"+id+"/resolve", bearer(tok))
	case "reopen":
		if r := e.do("POST", commentsPath+"/"+id+"/resolve", bearer(tok)); r.Status != http.StatusOK {
			return r
		}
		return e.do("POST", commentsPath+"/"+id+"/reopen", bearer(tok))
	case "react":
		return e.do("PUT", commentsPath+"/"+id+thumbs, bearer(tok))
	case "unreact":
		return e.do("DELETE", commentsPath+"/"+id+thumbs, bearer(tok))
	case "delete":
		return e.do("DELETE", commentsPath+"/"+id, bearer(tok))
	}
	e.t.Fatalf("unknown route %q", route)
	return nil
}

// TestCommentsGoWithTheirDocument trashes a document: its comments are
// 404 on every route until it is restored, and a purge deletes them.
func TestCommentsGoWithTheirDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ada := e.login(e.user("ada@example.com", "editor", "").Email)
	doc := decodeDoc(t, e.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "T", "content": "Quote me."})))
	th := e.postComment(ada, doc.ID, map[string]any{"body": "Thread", "anchor": map[string]any{"quote": "Quote me."}})
	e.postComment(ada, doc.ID, map[string]any{"body": "Reply", "parent_id": th.ID})

	all := func(want int) {
		t.Helper()
		for _, route := range []string{"create", "list", "edit", "resolve", "reopen", "react", "unreact", "delete"} {
			if r := cellRequest(e, route, ada, doc.ID, th.ID); r.Status != want && !(want == 200 && r.Status == 201) {
				t.Errorf("%s: %d %s, want %d", route, r.Status, r.Body, want)
			}
		}
	}
	wantMessage(t, e.do("DELETE", docsPath+"/"+doc.ID, bearer(ada)), "Document deleted")
	all(http.StatusNotFound)
	decodeDoc(t, e.do("POST", "/api/documentation/trash/"+doc.ID+"/restore", bearer(ada)))
	if got := bodies(e.threads(ada, doc.ID, "")); len(got) != 1 || got[0] != "Thread [Reply]" {
		t.Errorf("after the restore: %v", got)
	}
	all(http.StatusOK) // the last one deletes the thread, which stays for its replies
	wantMessage(t, e.do("DELETE", docsPath+"/"+doc.ID, bearer(ada)), "Document deleted")
	if r := e.do("DELETE", "/api/documentation/trash/"+doc.ID, bearer(ada)); r.Status != http.StatusOK {
		t.Fatalf("purge: %d %s", r.Status, r.Body)
	}
	if _, err := e.store.Comment(context.Background(), quire.Visibility{All: true}, "", th.ID); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("after the purge the thread reads %v", err)
	}
}

// TestCommentLimits fills a thread with replies, and a document with
// threads, through the store, then asks for one more through the API.
func TestCommentLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	adaUser := e.user("ada@example.com", "editor", "")
	ada := e.login(adaUser.Email)
	doc := decodeDoc(t, e.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "T", "content": "x"})))
	th := e.postComment(ada, doc.ID, map[string]any{"body": "Thread"})
	ctx := context.Background()
	vis := quire.Visibility{All: true}
	for i := 1; i < quire.MaxReplies; i++ {
		c := &quire.Comment{DocumentID: doc.ID, ParentID: th.ID, AuthorID: adaUser.ID, Body: "r"}
		if err := e.store.CreateComment(ctx, vis, c, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	e.postComment(ada, doc.ID, map[string]any{"body": "The 500th", "parent_id": th.ID})
	e.wantError(e.do("POST", docCommentsPath(doc.ID), bearer(ada), jsonBody(map[string]any{"body": "The 501st", "parent_id": th.ID})),
		http.StatusConflict, quire.ELIMITREACHED)
	l := e.threads(ada, doc.ID, "")
	if len(l.Threads) != 1 || len(l.Threads[0].Replies) != quire.MaxReplies {
		t.Errorf("%d threads, %d replies", len(l.Threads), len(l.Threads[0].Replies))
	}

}

// TestCommentThreadLimit fills a document with threads (most in one SQL
// transaction, the last through the store), then asks for one more through the API. On SQLite only: the count is the
// same SQL on both engines (commentssql, written once), and 2,000 writes
// serialised on the document's lock take 10 s on PostgreSQL.
func TestCommentThreadLimit(t *testing.T) {
	t.Parallel()
	onlyOn(t, "sqlite", "the limit's SQL is written once for both engines; 2,000 writes take 10 s on PostgreSQL")
	var path string
	e := newEnv(t, withStore(func(t testing.TB) quire.Store {
		path = sqlitetest.Migrated(t)
		db, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}))
	adaUser := e.user("ada@example.com", "editor", "")
	ada := e.login(adaUser.Email)
	doc := decodeDoc(t, e.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "T", "content": "x"})))
	ctx := context.Background()
	vis := quire.Visibility{All: true}
	// The first places in one transaction beside the store (storetest
	// tests the limit's rule on both engines; 2,000 creates cost seconds
	// of CPU under -race), the last 16 through the store, eight writers at once, which the SQLite
	// writer commits together.
	const through = 16
	fillThreads(t, path, doc.ID, adaUser.ID, quire.MaxThreads-1-through, e.clock.Now())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < through; i += 8 {
				c := &quire.Comment{DocumentID: doc.ID, AuthorID: adaUser.ID, Body: "t"}
				if err := e.store.CreateComment(ctx, vis, c, e.clock.Now()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	last := e.postComment(ada, doc.ID, map[string]any{"body": "The 2,000th"})
	e.wantError(e.do("POST", docCommentsPath(doc.ID), bearer(ada), jsonBody(map[string]any{"body": "The 2,001st"})),
		http.StatusConflict, quire.ELIMITREACHED)
	// A reply in a full document is still taken.
	e.postComment(ada, doc.ID, map[string]any{"body": "Still a reply", "parent_id": last.ID})
	if l := e.threads(ada, doc.ID, "status=all"); l.Pagination.Total != quire.MaxThreads {
		t.Errorf("%d threads, want %d", l.Pagination.Total, quire.MaxThreads)
	}
}

// TestAnchorsFollowTheText moves, removes and brings back the quotes of
// two threads by a save, a save, a version restore and an import.
func TestAnchorsFollowTheText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ada := e.login(e.user("ada@example.com", "editor", "").Email)
	doc := decodeDoc(t, e.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "Moving",
		"content": "First the *oak* grows.\n\nThen the **birch** falls."})))
	e.postComment(ada, doc.ID, map[string]any{"body": "Oak", "anchor": map[string]any{"quote": "oak grows"}})
	e.postComment(ada, doc.ID, map[string]any{"body": "Birch", "anchor": map[string]any{"quote": "birch"}})
	e.postComment(ada, doc.ID, map[string]any{"body": "Page"})

	// state is each thread's body and its anchor's state, in order.
	state := func() []string {
		t.Helper()
		out := []string{}
		for _, th := range e.threads(ada, doc.ID, "").Threads {
			s := th.Body
			if th.Anchor != nil {
				s += " " + th.Anchor.State + " " + th.Anchor.Quote
			}
			out = append(out, s)
		}
		return out
	}
	save := func(content string) {
		t.Helper()
		decodeDoc(t, e.do("PUT", docsPath+"/"+doc.ID, bearer(ada), jsonBody(map[string]any{"content": content})))
	}
	steps := []struct {
		what string
		do   func()
		want []string
	}{
		{"as written", func() {}, []string{"Oak attached oak grows", "Birch attached birch", "Page"}},
		{"a save that moves a quote before the other", func() { save("Then the birch falls.\n\nFirst the oak   grows.") },
			[]string{"Birch attached birch", "Oak attached oak grows", "Page"}},
		{"a save that removes one", func() { save("Then the birch falls. First the elm grows.") },
			[]string{"Birch attached birch", "Oak outdated oak grows", "Page"}},
		{"a version restore that brings it back", func() {
			decodeDoc(t, e.do("POST", docsPath+"/"+doc.ID+"/versions/1/restore", bearer(ada)))
		}, []string{"Oak attached oak grows", "Birch attached birch", "Page"}},
		{"an import over the document that removes the other", func() {
			files := unzip(t, e.do("GET", "/api/documentation/export", bearer(ada)).Body)
			if len(files) != 1 {
				t.Fatalf("export: %v", files)
			}
			for name, content := range files {
				files[name] = strings.Replace(content, "birch", "beech", 1)
			}
			importFiles(t, e, ada, files)
		}, []string{"Oak attached oak grows", "Birch outdated birch", "Page"}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, state()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.what, diff)
		}
	}
}

// TestCommentEventsReachWebhooks registers a receiver of comment.* and
// comments: the receiver gets comment.created with the ids, not the body.
func TestCommentEventsReachWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withHTTPConfig(func(c *serverConfig) { c.Webhooks.AllowPrivate = true }))
	admin := e.login(e.user("root@example.com", "admin", "").Email)
	got := receiveWebhooks(t, e, admin, []string{"comment.*"})
	doc := decodeDoc(t, e.do("POST", docsPath, bearer(admin), jsonBody(map[string]any{"title": "Hooked", "content": "x"})))
	c := e.postComment(admin, doc.ID, map[string]any{"body": "A secret remark"})
	payloads := got(1)
	ev, _ := payloads[0]["event"].(map[string]any)
	details, _ := ev["details"].(map[string]any)
	if ev["action"] != quire.ActionCommentCreated || details["document_id"] != doc.ID || details["comment_id"] != c.ID {
		t.Errorf("payload %v", payloads[0])
	}
	if s := fmt.Sprint(payloads[0]); strings.Contains(s, "secret remark") {
		t.Errorf("the payload holds the body: %s", s)
	}
}

// importFiles imports files (path to content) as one archive as the
// holder of tok, failing unless 200.
func importFiles(t *testing.T, e *env, tok string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	zw.Close()
	body, ct := multipartFile(t, "file", "docs.zip", buf.Bytes())
	if r := e.do("POST", "/api/documentation/import", bearer(tok), rawBody(string(body)), header("Content-Type", ct)); r.Status != http.StatusOK {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
}

// receiveWebhooks registers, as the administrator admin, a receiver of
// events and runs the delivery worker; the function it returns waits for
// n deliveries (at most a minute) and returns their payloads.
func receiveWebhooks(t *testing.T, e *env, admin string, events []string) func(n int) []map[string]any {
	t.Helper()
	var mu sync.Mutex
	var got []map[string]any
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p map[string]any
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	if r := e.do("POST", "/api/admin/webhooks", bearer(admin), jsonBody(map[string]any{"url": rcv.URL, "events": events})); r.Status != http.StatusCreated {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	worker := &webhook.Worker{Store: e.store, AllowPrivate: true, Now: e.clock.Now, Poll: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); worker.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return func(n int) []map[string]any {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			out := append([]map[string]any(nil), got...)
			mu.Unlock()
			if len(out) >= n {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d deliveries after a minute, want %d", len(out), n)
			}
		}
	}
}

// fillThreads writes n threads (roots without anchors) by authorID on
// document docID of the SQLite file at path, in one transaction of a
// connection of its own, counted as the store's creates count them
// (comment_versions).
func fillThreads(t *testing.T, path, docID, authorID string, n int, at time.Time) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := t.Context()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// Each id is a random UUID (version 4), as unique as the store's own.
	if _, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO comments (id, document_id, author_id, body, created_at, updated_at)
		SELECT lower(printf('%s-%s-4%s-8%s-%s', hex(randomblob(4)), hex(randomblob(2)), substr(hex(randomblob(2)), 2),
			substr(hex(randomblob(2)), 2), hex(randomblob(6)))), ?, ?, 'filled ' || i, ?, ? FROM n`,
		n, docID, authorID, at.UnixMicro(), at.UnixMicro()); err != nil {
		t.Fatalf("fill threads: %v", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO comment_versions (document_id, seq, threads_seq, threads) VALUES (?, 1, 1, ?)
		ON CONFLICT (document_id) DO UPDATE SET seq = comment_versions.seq + 1, threads_seq = comment_versions.seq + 1,
		threads = comment_versions.threads + excluded.threads, reacted_id = NULL`, docID, n); err != nil {
		t.Fatalf("count the threads: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
