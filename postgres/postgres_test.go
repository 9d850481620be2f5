package postgres_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"quire"
	"quire/pgtest"
	"quire/postgres"
	"quire/sqlstore"
	"quire/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// open opens the store at url and closes it when t ends.
func open(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// schemaOpener returns an Opener that gives each store a schema of its own
// in one database of t: an empty schema, with search_path in the URL, is a
// fresh database to the store at a fraction of the cost of CREATE DATABASE,
// which keeps the suite's hundred stores quick.
func schemaOpener(t *testing.T) storetest.Opener {
	base := pgtest.Start(t)
	return func(t *testing.T) quire.Store {
		var b [6]byte
		rand.Read(b[:])
		schema := "s_" + hex.EncodeToString(b[:])
		admin, err := pgx.Connect(t.Context(), base)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close(context.Background())
		if _, err := admin.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return open(t, u.String())
	}
}

// TestStore runs the store suite, each store on a database of its own made
// from a template that postgres.Open migrated once for the process (the
// migrations have tests of their own): a copy costs a fraction of
// migrating a new schema, and the suites run in parallel. The suite checks
// the stores' rules, not the statement limit (TestStatementTimeout does):
// its statements may take a minute instead of 5 s, since on a loaded
// machine under -race a comment's create that waited for a save of a long
// text to let go of the document outlasted 5 s.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) quire.Store {
		u, err := url.Parse(pgtest.StartFrom(t, "migrated", migrate))
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("statement_timeout", "1min")
		u.RawQuery = q.Encode()
		return filler{open(t, u.String()), u.String()}
	})
}

// filler is a store of TestStore with storetest.ThreadFiller and
// storetest.ReplyFiller: the threads and replies are written through a
// connection of their own, in one transaction.
type filler struct {
	*postgres.DB
	url string
}

// inTx runs fn in a transaction of a connection of its own, beside the
// store's, and commits it.
func (f filler) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	conn, err := pgx.Connect(ctx, f.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func (f filler) FillThreads(ctx context.Context, docID, authorID string, n int, at time.Time) error {
	return f.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO comments (id, document_id, author_id, body, created_at, updated_at)
		SELECT gen_random_uuid()::text, $1, $2, 'filled ' || i, $3, $3 FROM generate_series(1, $4::int) i`,
			docID, authorID, at, n); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO comment_versions (document_id, seq, threads_seq, threads) VALUES ($1, 1, 1, $2)
		ON CONFLICT (document_id) DO UPDATE SET seq = comment_versions.seq + 1, threads_seq = comment_versions.seq + 1,
		threads = comment_versions.threads + excluded.threads, reacted_id = NULL`, docID, n); err != nil {
			return err
		}
		return nil
	})
}

// FillReplies writes n replies to parentID in one transaction of a
// connection of its own, as FillThreads writes threads, and changes the
// comments version as CreateComment's bump does (storetest.ReplyFiller).
func (f filler) FillReplies(ctx context.Context, docID, parentID, authorID string, n int, at time.Time) error {
	return f.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO comments (id, document_id, parent_id, author_id, body, created_at, updated_at)
		SELECT gen_random_uuid()::text, $1, $2, $3, 'filled ' || i, $4, $4 FROM generate_series(1, $5::int) i`,
			docID, parentID, authorID, at, n); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE comment_versions SET seq = seq + 1, threads_seq = seq + 1, reacted_id = NULL WHERE document_id = $1`, docID); err != nil {
			return err
		}
		return nil
	})
}

// migrate applies every migration to the empty database at url.
func migrate(ctx context.Context, url string) error {
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return err
	}
	return db.Close()
}

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func tokenHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// TestSmoke runs the basic path on a database of its own, in the default
// schema, as quire runs in production: a copy of the migrated template
// (the migrations of an empty database are TestOpen's and migrate_test.go's).
func TestSmoke(t *testing.T) {
	t.Parallel()
	db := open(t, pgtest.StartFrom(t, "migrated", migrate))
	ctx := t.Context()

	t.Run("a user reads back with its role", func(t *testing.T) {
		u := storetest.NewEditor(t, db, "ada@example.com")
		got, err := db.UserByEmail(ctx, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		want := *u
		want.Role = quire.Role{Key: "editor", Label: "Editor", Docs: quire.LevelWrite}
		if diff := cmp.Diff(want, *got); diff != "" {
			t.Errorf("user (-want +got):\n%s", diff)
		}
	})

	t.Run("a session is found by its token hash", func(t *testing.T) {
		u, err := db.UserByEmail(ctx, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		s := &quire.Session{UserID: u.ID, TokenHash: tokenHash("tok"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), LastUsedAt: t0}
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		got, gotUser, err := db.SessionByTokenHash(ctx, tokenHash("tok"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*s, *got); diff != "" {
			t.Errorf("session (-want +got):\n%s", diff)
		}
		if gotUser.ID != u.ID {
			t.Errorf("session user %s, want %s", gotUser.ID, u.ID)
		}
	})

	t.Run("a document takes a guarded update and refuses a stale one", func(t *testing.T) {
		u, err := db.UserByEmail(ctx, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		d := &quire.Document{Title: "Runbook", Content: "Restart the pager", ContentType: "markdown", Status: "draft",
			Visibility: "private", OwnerID: u.ID, Tags: []string{"Ops"}}
		if err := db.CreateDocument(ctx, d, t0); err != nil {
			t.Fatal(err)
		}
		vis := quire.Visibility{UserID: u.ID}
		edit := func(content string) func(d *quire.Document) (bool, error) {
			return func(d *quire.Document) (bool, error) { d.Content = content; return true, nil }
		}
		got, err := db.UpdateDocument(ctx, vis, d.ID, d.UpdatedAt, u.ID, t0.Add(time.Second), edit("Restart it twice"))
		if err != nil {
			t.Fatal(err)
		}
		want := *d
		want.Content, want.Version, want.UpdatedAt = "Restart it twice", 2, t0.Add(time.Second)
		if diff := cmp.Diff(want, *got); diff != "" {
			t.Errorf("updated document (-want +got):\n%s", diff)
		}
		_, err = db.UpdateDocument(ctx, vis, d.ID, d.UpdatedAt, u.ID, t0.Add(2*time.Second), edit("stale"))
		if code := quire.ErrorCode(err); code != quire.EDOCUMENTCONFLICT {
			t.Errorf("stale update: %v (code %s), want %s", err, code, quire.EDOCUMENTCONFLICT)
		}
		docs, total, err := db.ListDocuments(ctx, quire.DocumentFilter{Visibility: vis, Search: "TWICE restart",
			Tags: []string{"ops"}, SortBy: "relevance", Desc: true, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if total != 1 || len(docs) != 1 || docs[0].ID != d.ID {
			t.Errorf("search found %d (total %d), want the document", len(docs), total)
		}
		// No limit is no limit, and no content unless asked for.
		docs, total, err = db.ListDocuments(ctx, quire.DocumentFilter{Visibility: vis})
		if err != nil {
			t.Fatal(err)
		}
		want.Content = ""
		if diff := cmp.Diff([]quire.Document{want}, docs); diff != "" || total != 1 {
			t.Errorf("list without limit: total %d (-want +got):\n%s", total, diff)
		}
	})
}

// TestLargeText stores what a client may send at the size limit: the
// search vector must stay within PostgreSQL's limits rather than fail.
func TestLargeText(t *testing.T) {
	t.Parallel()
	db := open(t, pgtest.StartFrom(t, "migrated", migrate))
	ctx := t.Context()
	owner := storetest.NewEditor(t, db, "ada@example.com")
	var b bytes.Buffer
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, "w%x ", i*7919) // distinct words, over 1 MiB of them
	}
	b.WriteString(strings.Repeat("z", 5000) + " needle")
	d := &quire.Document{Title: "Big", Content: b.String(), ContentType: "plain", Status: "draft",
		Visibility: "private", OwnerID: owner.ID, Summary: "haystack"}
	if err := db.CreateDocument(ctx, d, t0); err != nil {
		t.Fatalf("create a 2 MiB document: %v", err)
	}
	got, err := db.Document(ctx, quire.Visibility{All: true}, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != d.Content {
		t.Errorf("content of %d bytes read back as %d bytes", len(d.Content), len(got.Content))
	}
	for search, want := range map[string]int{"haystack": 1, "w0": 1, "big": 1, strings.Repeat("z", 5000): 0} {
		_, total, err := db.ListDocuments(ctx, quire.DocumentFilter{Visibility: quire.Visibility{All: true}, Search: search, Limit: 1})
		if err != nil || total != want {
			t.Errorf("search %.20q: total %d, %v; want %d", search, total, err, want)
		}
	}
}

// TestTwoNodes opens two stores on one database, as two quire processes
// behind a load balancer: what one writes binds the other.
func TestTwoNodes(t *testing.T) {
	t.Parallel()
	// A copy of the migrated template: this is about what the nodes share,
	// not about migrating (TestOpen).
	url := pgtest.StartFrom(t, "migrated", migrate)
	a, b := open(t, url), open(t, url)
	ctx := t.Context()

	t.Run("a session created on one node is found, and its revocation seen, on the other", func(t *testing.T) {
		u := storetest.NewEditor(t, a, "ada@example.com")
		s := &quire.Session{UserID: u.ID, TokenHash: tokenHash("shared"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), LastUsedAt: t0}
		if err := a.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		got, _, err := b.SessionByTokenHash(ctx, tokenHash("shared"))
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != s.ID || !got.RevokedAt.IsZero() {
			t.Fatalf("node b read %+v, want the valid session %s", got, s.ID)
		}
		if err := b.RevokeSession(ctx, s.ID, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, _, err = a.SessionByTokenHash(ctx, tokenHash("shared"))
		if err != nil {
			t.Fatal(err)
		}
		if !got.RevokedAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("node a sees RevokedAt %v, want %v", got.RevokedAt, t0.Add(time.Minute))
		}
	})

	t.Run("twenty failures split across the nodes refuse the twenty-first on either", func(t *testing.T) {
		l := quire.LoginLimits{Limit: 20, Window: 15 * time.Minute, LockThreshold: 50, LockDuration: 30 * time.Minute}
		const addr, email = "192.0.2.1", "eve@example.com"
		// In parallel, ten from each node: the window is counted in the
		// database, so the twenty all pass and nothing more does.
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := range 20 {
			node := []*postgres.DB{a, b}[i%2]
			wg.Go(func() {
				if _, err := node.BeginLogin(ctx, addr, email, t0, l); err != nil {
					errs <- err
					return
				}
				errs <- node.LoginFailed(ctx, email, t0, l, nil)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("one of the first twenty: %v", err)
			}
		}
		for name, node := range map[string]*postgres.DB{"a": a, "b": b} {
			_, err := node.BeginLogin(ctx, addr, email, t0.Add(time.Minute), l)
			var qe *quire.Error
			if !errors.As(err, &qe) || qe.Code != quire.ETOOMANYATTEMPTS || qe.RetryAfter != 14*time.Minute {
				t.Errorf("node %s: 21st attempt got %v, want %s with Retry-After 14m", name, err, quire.ETOOMANYATTEMPTS)
			}
		}
	})

	t.Run("of 100 parallel attempts on two nodes exactly the limit get past", func(t *testing.T) {
		l := quire.LoginLimits{Limit: 20, Window: 15 * time.Minute, LockThreshold: 1000, LockDuration: 30 * time.Minute}
		var (
			mu     sync.Mutex
			passed int
			wg     sync.WaitGroup
		)
		for i := range 100 {
			node := []*postgres.DB{a, b}[i%2]
			wg.Go(func() {
				_, err := node.BeginLogin(ctx, "192.0.2.2", "mallory@example.com", t0, l)
				switch {
				case err == nil:
					mu.Lock()
					passed++
					mu.Unlock()
				case quire.ErrorCode(err) != quire.ETOOMANYATTEMPTS:
					t.Errorf("attempt: %v", err)
				}
			})
		}
		wg.Wait()
		if passed != 20 {
			t.Errorf("%d attempts passed, want 20", passed)
		}
	})

	t.Run("workers on both nodes never claim the same mail", func(t *testing.T) {
		var want []string
		for i := range 60 {
			m := &quire.Mail{To: fmt.Sprintf("u%d@example.com", i), Subject: "s", Text: "t", HTML: "h", CreatedAt: t0}
			if err := []*postgres.DB{a, b}[i%2].QueueMail(ctx, m); err != nil {
				t.Fatal(err)
			}
			want = append(want, m.ID)
		}
		var (
			mu  sync.Mutex
			got []string
			wg  sync.WaitGroup
		)
		for i := range 6 {
			node := []*postgres.DB{a, b}[i%2]
			wg.Go(func() {
				for {
					mails, err := node.ClaimMail(ctx, t0, time.Hour, 4)
					if err != nil {
						t.Errorf("claim: %v", err)
						return
					}
					if len(mails) == 0 {
						return
					}
					mu.Lock()
					for _, m := range mails {
						got = append(got, m.ID)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		sort.Strings(want)
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("claimed mails, each exactly once (-want +got):\n%s", diff)
		}
	})
}

func TestOpen(t *testing.T) {
	t.Parallel()
	t.Run("nodes starting together on an empty database migrate it once", func(t *testing.T) {
		url := pgtest.Start(t)
		var wg sync.WaitGroup
		dbs := make([]*postgres.DB, 4)
		errs := make([]error, 4)
		for i := range dbs {
			wg.Go(func() { dbs[i], errs[i] = postgres.Open(t.Context(), url) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("node %d: %v", i, err)
			}
			defer dbs[i].Close()
		}
		roles, err := dbs[0].Roles(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(roles) != 4 {
			t.Errorf("%d roles after concurrent migrations, want the 4 seeded once", len(roles))
		}
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var applied []string
		rows, _ := conn.Query(t.Context(), `SELECT name FROM schema_migrations ORDER BY name`)
		applied, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		// Every migration of PostgreSQL, once: the list grows with each
		// new one.
		migrations, err := sqlstore.Migrations("postgres")
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, m := range migrations {
			want = append(want, m.Name)
		}
		if diff := cmp.Diff(want, applied); diff != "" {
			t.Errorf("schema_migrations (-want +got):\n%s", diff)
		}
		// A save must never be the one that merges GIN's pending list into
		// the search index (0005): that merge outgrows statement_timeout.
		var opts []string
		if err := conn.QueryRow(t.Context(), `SELECT reloptions FROM pg_class WHERE oid = 'documents_search'::regclass`).Scan(&opts); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(opts, "fastupdate=off") {
			t.Errorf("documents_search options %q, want fastupdate=off", opts)
		}
	})

	t.Run("an unreachable database fails fast, as unavailable", func(t *testing.T) {
		start := time.Now()
		// Port 1 on the loopback: nothing listens, the connection is refused.
		_, err := postgres.Open(t.Context(), "postgres://quire:secret@127.0.0.1:1/quire?sslmode=disable")
		if !errors.Is(err, quire.ErrUnavailable) {
			t.Errorf("error %v, want one wrapping quire.ErrUnavailable", err)
		}
		if bytes.Contains([]byte(fmt.Sprint(err)), []byte("secret")) {
			t.Errorf("error %q shows the password", err)
		}
		if d := time.Since(start); d > 6*time.Second {
			t.Errorf("took %v to fail", d)
		}
	})

	t.Run("a store whose database refuses it answers unavailable", func(t *testing.T) {
		dbURL := pgtest.StartFrom(t, "migrated", migrate)
		db := open(t, dbURL)
		// The database cannot close itself to connections: do it from the
		// maintenance database of the same server, as a restart would,
		// without stopping the server that other tests share.
		if err := pgtest.CutOff(t, dbURL); err != nil {
			t.Skip(err)
		}
		for _, op := range []struct {
			name string
			err  func() error
		}{
			{"read", func() error { _, err := db.UserByEmail(t.Context(), "ada@example.com"); return err }},
			{"write", func() error { return db.QueueMail(t.Context(), &quire.Mail{To: "a@example.com", CreatedAt: t0}) }},
			{"ping", func() error { return db.Ping(t.Context()) }},
		} {
			if err := op.err(); !errors.Is(err, quire.ErrUnavailable) {
				t.Errorf("%s after the database dropped the store: %v, want quire.ErrUnavailable", op.name, err)
			}
		}
	})
}

// Not parallel: it depends on how long statements take, which tests beside
// it would change.
func TestStatementTimeout(t *testing.T) {
	t.Run("an update blocked beyond the statement timeout answers unavailable", func(t *testing.T) {
		// Migrated already: Open's migrations need not fit in 500 ms a
		// statement on a loaded machine.
		dbURL := pgtest.StartFrom(t, "migrated", migrate)
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("statement_timeout", "500ms")
		u.RawQuery = q.Encode()
		db := open(t, u.String())
		ctx := t.Context()
		owner := storetest.NewEditor(t, db, "ada@example.com")
		d := &quire.Document{Title: "Held", ContentType: "plain", Status: "draft", Visibility: "private", OwnerID: owner.ID}
		if err := db.CreateDocument(ctx, d, t0); err != nil {
			t.Fatal(err)
		}
		// Another session holds the document's row lock and does not let go.
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background())
		if _, err := tx.Exec(ctx, `SELECT 1 FROM documents WHERE id = $1 FOR UPDATE`, d.ID); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = db.UpdateDocument(ctx, quire.Visibility{All: true}, d.ID, time.Time{}, owner.ID, t0.Add(time.Second),
			func(d *quire.Document) (bool, error) { d.Title = "Changed"; return true, nil })
		if !errors.Is(err, quire.ErrUnavailable) {
			t.Errorf("blocked update: %v, want quire.ErrUnavailable", err)
		}
		if waited := time.Since(start); waited > 3*time.Second {
			t.Errorf("waited %v for a 500ms statement timeout", waited)
		}
	})
}

func TestBackup(t *testing.T) {
	t.Parallel()
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql not on PATH: the restore of a backup is not checked")
	}
	src := open(t, pgtest.StartFrom(t, "migrated", migrate))
	ctx := t.Context()
	u := storetest.NewEditor(t, src, "ada@example.com")
	parent := &quire.Folder{Name: "Parent"}
	if err := src.CreateFolder(ctx, parent, t0); err != nil {
		t.Fatal(err)
	}
	// A child created first and moved under a later parent: the backup must
	// still load parents before children.
	child := &quire.Folder{Name: "Child"}
	if err := src.CreateFolder(ctx, child, t0); err != nil {
		t.Fatal(err)
	}
	late := &quire.Folder{Name: "Late parent"}
	if err := src.CreateFolder(ctx, late, t0); err != nil {
		t.Fatal(err)
	}
	child.ParentID = late.ID
	if err := src.UpdateFolder(ctx, child, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	d := &quire.Document{Title: "Café notes", Content: "it's a \"quoted\"\ttab\\backslash\nnewline", ContentType: "markdown",
		Status: "draft", Visibility: "private", OwnerID: u.ID, FolderID: child.ID, Tags: []string{"A", "b"}}
	if err := src.CreateDocument(ctx, d, t0); err != nil {
		t.Fatal(err)
	}
	if err := src.PutRole(ctx, quire.Role{Key: "viewer", Label: "Reader", Docs: quire.LevelView}); err != nil {
		t.Fatal(err)
	}
	// A row in the tables a first backup forgot: settings, the audit log,
	// API tokens.
	if err := src.SetSetting(ctx, quire.SettingPublicURL, "https://docs.example.com"); err != nil {
		t.Fatal(err)
	}
	tok := &quire.APIToken{UserID: u.ID, Name: "ci", Scope: quire.ScopeRead, TokenHash: []byte("0123456789abcdef0123456789abcdef"),
		CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}
	if err := src.Recording(quire.NewEvent(quire.ActionTokenCreated, t0, nil, quire.RequestInfo{IP: "192.0.2.1"})).
		CreateAPIToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := src.LinkIdentity(ctx, &quire.Identity{Issuer: "https://id.example.com", Subject: "sub-1", UserID: u.ID, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	// A thread whose root, edited after its reply, is stored after it.
	root := &quire.Comment{DocumentID: d.ID, AuthorID: u.ID, Body: "root", Anchor: &quire.Anchor{Quote: "quoted"}}
	if err := src.CreateComment(ctx, quire.Visibility{All: true}, root, t0); err != nil {
		t.Fatal(err)
	}
	reply := &quire.Comment{DocumentID: d.ID, ParentID: root.ID, AuthorID: u.ID, Body: "reply"}
	if err := src.CreateComment(ctx, quire.Visibility{All: true}, reply, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := src.EditComment(ctx, quire.Visibility{All: true}, root.ID, u.ID, "root, edited", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := src.React(ctx, quire.Visibility{All: true}, reply.ID, u.ID, "🎉", true); err != nil {
		t.Fatal(err)
	}

	var buf bytes.Buffer
	if err := src.Backup(ctx, &buf); err != nil {
		t.Fatal(err)
	}

	dstURL := pgtest.Start(t)
	cmd := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction", "-d", dstURL)
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql restore: %v\n%s", err, out)
	}
	dst := open(t, dstURL)

	t.Run("the restored database holds the same rows", func(t *testing.T) {
		wantUser, err := src.UserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		gotUser, err := dst.UserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*wantUser, *gotUser); diff != "" {
			t.Errorf("user (-want +got):\n%s", diff)
		}
		all := quire.Visibility{All: true}
		gotDoc, err := dst.Document(ctx, all, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*d, *gotDoc); diff != "" {
			t.Errorf("document (-want +got):\n%s", diff)
		}
		role, err := dst.Role(ctx, "viewer")
		if err != nil {
			t.Fatal(err)
		}
		if role.Label != "Reader" {
			t.Errorf("viewer label %q, want the changed Reader", role.Label)
		}
		if linked, err := dst.IdentityUser(ctx, "https://id.example.com", "sub-1"); err != nil || linked.ID != u.ID {
			t.Errorf("single sign-on identity after restore: %v, %v", linked, err)
		}
		roles, err := dst.Roles(ctx)
		if err != nil || len(roles) != 4 {
			t.Errorf("roles %v, %v; want the 4 of the source", roles, err)
		}
		docs, total, err := dst.ListDocuments(ctx, quire.DocumentFilter{Visibility: all, Search: "cafe", Tags: []string{"a"}, Limit: 10})
		if err != nil || total != 1 || len(docs) != 1 {
			t.Errorf("search in the restored database: %d docs, total %d, %v; want the document", len(docs), total, err)
		}
		folders, err := dst.Folders(ctx)
		if err != nil || len(folders) != 3 {
			t.Errorf("folders %v, %v; want 3", folders, err)
		}
	})

	t.Run("every table holds the same rows", func(t *testing.T) {
		srcC, dstC := srcConn(t, src), srcConn(t, dst)
		for _, table := range append(slices.Clone(postgres.BackupTables), postgres.RebuiltTables...) {
			want, got := tableRows(t, srcC, table), tableRows(t, dstC, table)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("table %s (-source +restored):\n%s", table, diff)
			}
		}
	})
}

// TestBackupNamesEveryTable reads the catalog of a migrated database: a
// table the backup neither copies nor names as rebuilt would be lost by a
// backup and restore, so a migration that adds one must list it.
func TestBackupNamesEveryTable(t *testing.T) {
	t.Parallel()
	db := open(t, pgtest.StartFrom(t, "migrated", migrate))
	rows, err := srcConn(t, db).Query(t.Context(), `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	named := append(slices.Clone(postgres.BackupTables), postgres.RebuiltTables...)
	for _, table := range tables {
		if !slices.Contains(named, table) {
			t.Errorf("table %s is neither in backupTables (copied) nor in rebuiltTables (postgres/backup.go)", table)
		}
	}
	for _, table := range named {
		if !slices.Contains(tables, table) {
			t.Errorf("backup.go names table %s, which the schema does not have", table)
		}
	}
}

// srcConn is a connection of the store's pool, for reading the catalog and
// whole tables.
func srcConn(t *testing.T, db *postgres.DB) *pgx.Conn {
	t.Helper()
	c, err := db.Pool().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Release)
	return c.Conn()
}

// tableRows reads every row of table as text, sorted.
func tableRows(t *testing.T, c *pgx.Conn, table string) []string {
	t.Helper()
	name := pgx.Identifier{table}.Sanitize()
	rows, err := c.Query(t.Context(), `SELECT t::text FROM `+name+` t ORDER BY 1`)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	return out
}
