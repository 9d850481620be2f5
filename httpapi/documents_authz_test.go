package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"quire"
)

// TestDocumentAuthorizationMatrix asks every endpoint of contract section 5,
// as every default role, about a document of every visibility, with the
// caller in every relation to it. Each cell uses a document whose owner,
// department (Engineering) and project (Apollo) are set so that only the
// relation differs: a fresh one for the rows that write or list the newest
// document, and for the rows that only read one (readOnly) or refuse every
// cell ("403") one per visibility and owner, made by the first cell that
// needs it, which no row changes.
//
// A cell reads: a status; for lists, "seen" (200, listed and counted) or
// "hid" (200, neither listed nor counted). A row of one cell applies to
// every relation and visibility (folders have no visibility).
func TestDocumentAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	relations := []string{"owner", "same department", "other department", "project member", "no department"}
	visibilities := []string{"private", "department", "project", "public"}

	// Columns: private | department | project | public, each with the five
	// relations above in order: owner, same department (Engineering, not in
	// Apollo), other department (Sales, not in Apollo), project member
	// (Sales, in Apollo), no department (in no department or project).
	const (
		nonAdminSees = "seen hid hid hid hid | seen seen hid hid hid | seen hid hid seen hid | seen seen seen seen seen"
		nonAdminGets = "200 404 404 404 404 | 200 200 404 404 404 | 200 404 404 200 404 | 200 200 200 200 200"
	)
	matrix := []struct {
		endpoint, role, want string
	}{
		{"list", "admin", "seen"},
		{"list", "editor", nonAdminSees},
		{"list", "viewer", nonAdminSees},
		{"list", "guest", "403"},
		{"search", "admin", "seen"},
		{"search", "editor", nonAdminSees},
		{"search", "viewer", nonAdminSees},
		{"search", "guest", "403"},
		{"departmentId filter", "admin", "seen"},
		{"departmentId filter", "editor", nonAdminSees},
		{"departmentId filter", "viewer", nonAdminSees},
		{"departmentId filter", "guest", "403"},
		{"projectId filter", "admin", "seen"},
		{"projectId filter", "editor", nonAdminSees},
		{"projectId filter", "viewer", nonAdminSees},
		{"projectId filter", "guest", "403"},
		{"visibility filter", "admin", "seen"},
		{"visibility filter", "editor", nonAdminSees},
		{"visibility filter", "viewer", nonAdminSees},
		{"visibility filter", "guest", "403"},
		{"read", "admin", "200"},
		{"read", "editor", nonAdminGets},
		{"read", "viewer", nonAdminGets},
		{"read", "guest", "403"},
		{"versions", "admin", "200"},
		{"versions", "editor", nonAdminGets},
		{"versions", "viewer", nonAdminGets},
		{"versions", "guest", "403"},
		{"version", "admin", "200"},
		{"version", "editor", nonAdminGets},
		{"version", "viewer", nonAdminGets},
		{"version", "guest", "403"},
		{"update", "admin", "200"},
		{"update", "editor", nonAdminGets},
		{"update", "viewer", "403"},
		{"update", "guest", "403"},
		{"restore", "admin", "200"},
		{"restore", "editor", nonAdminGets},
		{"restore", "viewer", "403"},
		{"restore", "guest", "403"},
		{"delete", "admin", "200"},
		{"delete", "editor", nonAdminGets},
		{"delete", "viewer", "403"},
		{"delete", "guest", "403"},
		// Create: the caller makes a document of that visibility in its own
		// department (department visibility needs one) and, for project
		// visibility, in Apollo (members only, admins excepted).
		{"create", "admin", "201 201 201 201 201 | 201 201 201 201 400 | 201 201 201 201 201 | 201 201 201 201 201"},
		{"create", "editor", "201 201 201 201 201 | 201 201 201 201 400 | 201 400 400 201 400 | 201 201 201 201 201"},
		{"create", "viewer", "403"},
		{"create", "guest", "403"},
		{"folder list", "admin", "200"},
		{"folder list", "editor", "200"},
		{"folder list", "viewer", "200"},
		{"folder list", "guest", "403"},
		{"folder create", "admin", "201"},
		{"folder create", "editor", "201"},
		{"folder create", "viewer", "403"},
		{"folder create", "guest", "403"},
		{"folder update", "admin", "200"},
		{"folder update", "editor", "200"},
		{"folder update", "viewer", "403"},
		{"folder update", "guest", "403"},
		{"folder delete", "admin", "200"},
		{"folder delete", "editor", "200"},
		{"folder delete", "viewer", "403"},
		{"folder delete", "guest", "403"},
	}

	fx := newDocsFixture(t)
	ctx := context.Background()
	fx.person("author@example.com", "editor", "Engineering", true)
	author := fx.users["author@example.com"]
	type member struct {
		email string
		user  quire.User
	}
	// The author above is made and signed in as everywhere else (auth
	// service, then the login endpoint). The 20 callers cost no argon2id
	// hash each (a quarter of a second under -race, twice per user: this
	// test's setup took longer than its rows): they are stored with
	// testPassword's hash at a test's cost (cheapHash), and their sessions
	// are ordinary ones (auth.SignInVerified: same token, lifetime and
	// checks as a password sign-in). Sign-in itself is tested in
	// auth_test.go.
	hash := cheapHash()
	callers := map[string]map[string]member{} // role -> relation -> caller
	for _, role := range []string{"admin", "editor", "viewer", "guest"} {
		r, err := fx.store.Role(ctx, role)
		if err != nil {
			t.Fatal(err)
		}
		callers[role] = map[string]member{}
		for i, rel := range relations {
			dept := []string{"Engineering", "Engineering", "Sales", "Sales", ""}[i]
			email := fmt.Sprintf("%s.%d@example.com", role, i)
			u := quire.User{Email: email, Name: nameOf(email), Role: *r, Status: quire.UserActive, PasswordHash: hash}
			if dept != "" {
				d, err := fx.store.EnsureDepartment(ctx, dept)
				if err != nil {
					t.Fatal(err)
				}
				u.DepartmentID, u.DepartmentName = d.ID, d.Name
			}
			if err := fx.store.CreateUser(ctx, &u); err != nil {
				t.Fatalf("create user %s: %v", email, err)
			}
			if rel == "owner" || rel == "project member" {
				if err := fx.store.AddProjectMember(ctx, fx.project, u.ID); err != nil {
					t.Fatal(err)
				}
			}
			sess, err := fx.auth.SignInVerified(ctx, quire.RequestInfo{IP: "127.0.0.1"}, &u, "matrix")
			if err != nil {
				t.Fatalf("sign in %s: %v", email, err)
			}
			fx.users[email], fx.tokens[email] = u, sess.Token
			callers[role][rel] = member{email, u}
		}
	}

	n := 0
	// newDoc stores a document (directly: a viewer may own one written
	// when it held write) whose title, word and tag are its own.
	newDoc := func(t *testing.T, owner quire.User, visibility string) (*quire.Document, string) {
		n++
		word := fmt.Sprintf("cell%05d", n)
		fx.clock.Advance(time.Millisecond)
		d := &quire.Document{
			Title: "Matrix " + word, Content: "Body of " + word, ContentType: "markdown", Status: "draft",
			Visibility: visibility, Tags: []string{word}, DepartmentID: fx.eng, ProjectID: fx.project, OwnerID: owner.ID,
		}
		if err := fx.store.CreateDocument(ctx, d, fx.clock.Now()); err != nil {
			t.Fatal(err)
		}
		return d, word
	}
	// readOnly are the endpoints that change no document and find theirs
	// by its id or its own word: their cells share documents (sharedDoc).
	readOnly := map[string]bool{"search": true, "departmentId filter": true, "projectId filter": true,
		"visibility filter": true, "read": true, "versions": true, "version": true}
	type shared struct {
		d    *quire.Document
		word string
	}
	sharedDocs := map[string]shared{} // visibility + " " + owner ID -> document
	sharedDoc := func(t *testing.T, owner quire.User, visibility string) (*quire.Document, string) {
		key := visibility + " " + owner.ID
		sd, ok := sharedDocs[key]
		if !ok {
			sd.d, sd.word = newDoc(t, owner, visibility)
			sharedDocs[key] = sd
		}
		return sd.d, sd.word
	}
	newFolder := func(t *testing.T) string {
		f := &quire.Folder{Name: "Matrix folder"}
		if err := fx.store.CreateFolder(ctx, f, fx.clock.Now()); err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	// listed runs a list query that matches the document by its word or
	// tag, and tells "seen" from "hid", checking the count agrees.
	listed := func(t *testing.T, e *env, tok, query, id string) string {
		r := e.do("GET", docsPath+"?"+query, bearer(tok))
		if r.Status != http.StatusOK {
			return fmt.Sprint(r.Status)
		}
		list := decodeList(t, r)
		switch {
		case len(list.Documents) == 1 && list.Documents[0].ID == id && list.Pagination.Total == 1:
			return "seen"
		case len(list.Documents) == 0 && list.Pagination.Total == 0:
			return "hid"
		}
		return fmt.Sprintf("listed %d of total %d", len(list.Documents), list.Pagination.Total)
	}
	// unchanged checks that a refused write left the document as it was.
	unchanged := func(t *testing.T, d *quire.Document) {
		got, err := fx.store.Document(ctx, quire.Visibility{All: true}, d.ID)
		if err != nil || got.Version != 1 || got.Content != d.Content {
			t.Errorf("a refused write changed the document: %+v, %v", got, err)
		}
	}

	for _, row := range matrix {
		t.Run(row.endpoint+" by "+row.role, func(t *testing.T) {
			e := fx.in(t).env
			want := strings.Fields(strings.ReplaceAll(row.want, "|", " "))
			if len(want) != 1 && len(want) != len(relations)*len(visibilities) {
				t.Fatalf("row has %d cells", len(want))
			}
			folderRow := strings.HasPrefix(row.endpoint, "folder")
			// A row that refuses every cell changes no document (unchanged
			// checks it), so its cells share documents too: a fresh one
			// each was 140 of the test's 340 stored documents.
			refusesAll := row.want == "403"
			for vi, vis := range visibilities {
				if folderRow && vi > 0 {
					break
				}
				for ri, rel := range relations {
					c := callers[row.role][rel]
					tok := fx.tokens[c.email]
					cellWant := want[0]
					if len(want) > 1 {
						cellWant = want[vi*len(relations)+ri]
					}
					owner := author
					if rel == "owner" {
						owner = c.user
					}
					var got string
					var d *quire.Document
					var word string
					if !folderRow && row.endpoint != "create" {
						if readOnly[row.endpoint] || refusesAll {
							d, word = sharedDoc(t, owner, vis)
						} else {
							d, word = newDoc(t, owner, vis)
						}
					}
					status := func(r *resp) string { return fmt.Sprint(r.Status) }
					switch row.endpoint {
					case "list":
						got = "hid"
						r := e.do("GET", docsPath+"?sortBy=created_at&sortOrder=desc&limit=1", bearer(tok))
						if r.Status != http.StatusOK {
							got = status(r)
						} else if l := decodeList(t, r); len(l.Documents) == 1 && l.Documents[0].ID == d.ID {
							got = "seen"
						}
					case "search":
						got = listed(t, e, tok, "search="+word, d.ID)
					case "departmentId filter":
						got = listed(t, e, tok, "departmentId="+fx.eng+"&tags="+word, d.ID)
					case "projectId filter":
						got = listed(t, e, tok, "projectId="+fx.project+"&tags="+word, d.ID)
					case "visibility filter":
						got = listed(t, e, tok, "visibility="+vis+"&tags="+word, d.ID)
					case "read":
						got = status(e.do("GET", docsPath+"/"+d.ID, bearer(tok)))
					case "versions":
						got = status(e.do("GET", docsPath+"/"+d.ID+"/versions", bearer(tok)))
					case "version":
						got = status(e.do("GET", docsPath+"/"+d.ID+"/versions/1", bearer(tok)))
					case "update":
						got = status(e.do("PUT", docsPath+"/"+d.ID, bearer(tok), jsonBody(map[string]any{"content": "changed"})))
					case "restore":
						got = status(e.do("POST", docsPath+"/"+d.ID+"/versions/1/restore", bearer(tok)))
					case "delete":
						got = status(e.do("DELETE", docsPath+"/"+d.ID, bearer(tok)))
					case "create":
						body := map[string]any{"title": "Made by " + rel, "visibility": vis}
						if vis == "project" {
							body["project_id"] = fx.project
						}
						got = status(e.do("POST", docsPath, bearer(tok), jsonBody(body)))
					case "folder list":
						got = status(e.do("GET", foldersPath, bearer(tok)))
					case "folder create":
						got = status(e.do("POST", foldersPath, bearer(tok), jsonBody(map[string]any{"name": "x"})))
					case "folder update":
						got = status(e.do("PUT", foldersPath+"/"+newFolder(t), bearer(tok), jsonBody(map[string]any{"name": "y"})))
					case "folder delete":
						got = status(e.do("DELETE", foldersPath+"/"+newFolder(t), bearer(tok)))
					default:
						t.Fatalf("unknown endpoint %q", row.endpoint)
					}
					where := vis + " document"
					if folderRow {
						where = "folders"
					}
					if got != cellWant {
						t.Errorf("%s by %s (%s) on a %s: got %s, want %s", row.endpoint, row.role, rel, where, got, cellWant)
					}
					if d != nil && (got == "403" || got == "404") {
						unchanged(t, d)
					}
				}
			}
		})
	}

	t.Run("a search for words of private documents reveals nothing to others", func(t *testing.T) {
		e := fx.in(t).env
		tok := fx.tokens[callers["editor"]["same department"].email]
		for _, q := range []string{"search=Matrix", "search=Body", "departmentId=" + fx.eng, "projectId=" + fx.project,
			"visibility=private", "search=" + url.QueryEscape("Matrix cell")} {
			all := map[string]bool{}
			for page := 1; ; page++ {
				list := decodeList(t, e.do("GET", docsPath+"?limit=100&page="+fmt.Sprint(page)+"&"+q, bearer(tok)))
				for _, d := range list.Documents {
					if d.Visibility == "private" && d.Owner.ID != callers["editor"]["same department"].user.ID {
						t.Fatalf("%s revealed private document %s", q, d.ID)
					}
					all[d.ID] = true
				}
				if !list.Pagination.HasMore {
					if list.Pagination.Total != len(all) {
						t.Fatalf("%s: total %d but %d listed", q, list.Pagination.Total, len(all))
					}
					break
				}
			}
		}
	})
}
