package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"quire"
	"quire/pgtest"
	"quire/storetest"
)

// openStarted opens the store at url (from pgtest.Start or migrated) and
// closes it when t ends.
// migrated is the URL of a database of t's own, a copy of one that Open
// migrated once for the process (pgtest.StartFrom): these tests are about
// search, not the migrations, which have tests of their own.
func migrated(t *testing.T) string {
	return pgtest.StartFrom(t, "migrated", func(ctx context.Context, url string) error {
		db, err := Open(ctx, url)
		if err != nil {
			return err
		}
		return db.Close()
	})
}

func openStarted(t *testing.T, url string) *DB {
	t.Helper()
	db, err := Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestSearchPagesAgreeWithOneStatement holds the pages of a search in
// relevance order, which the store reads by ranking and counting the
// matches once and then reading the page's rows, to what one plain
// statement over documents gives (every match, ordered by ts_rank and id):
// the same documents in the same order on every page, in both directions,
// the same total, for several readers and many queries, on documents drawn
// from a small vocabulary so that ranks tie often.
func TestSearchPagesAgreeWithOneStatement(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openStarted(t, migrated(t))
	dep, err := db.CreateDepartment(ctx, "Engineering")
	if err != nil {
		t.Fatal(err)
	}
	var users []*quire.User
	for i := range 3 {
		u := &quire.User{Email: fmt.Sprintf("u%d@example.com", i), Name: "U", Role: quire.Role{Key: "editor"},
			Status: quire.UserActive, PasswordHash: "x"}
		if i < 2 {
			u.DepartmentID = dep.ID
		}
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	r := rand.New(rand.NewPCG(18, 1))
	vocab := strings.Fields("deploy deployment release released rollback incident review api alpha beta")
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for i := range 150 {
		d := &quire.Document{Title: text(1 + r.IntN(3)), Summary: text(r.IntN(4)), Content: text(r.IntN(30)),
			ContentType: "plain", Status: "draft", Visibility: []string{"private", "department", "public"}[r.IntN(3)],
			OwnerID: users[r.IntN(3)].ID, Tags: []string{vocab[r.IntN(len(vocab))]}}
		if d.Visibility == "department" {
			d.DepartmentID = dep.ID
		}
		if err := db.CreateDocument(ctx, d, at.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			if err := db.DeleteDocument(ctx, quire.Visibility{All: true}, d.ID, d.OwnerID, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	readers := []quire.Visibility{{All: true}}
	for _, u := range users {
		readers = append(readers, quire.Visibility{UserID: u.ID, DepartmentID: u.DepartmentID})
	}
	searches := []string{"deploy", "release rollback", "de", "incident review api", "alpha", "r", "nothing", "api beta"}
	for _, vis := range readers {
		for _, search := range searches {
			q, _ := searchQuery(search)
			p := params{q}
			cond := visible(vis, &p)
			rows, _ := db.pool.Query(ctx, `SELECT d.id FROM documents d WHERE `+live+` AND `+cond+` AND d.search @@ $1::tsquery
				ORDER BY ts_rank(`+rankWeights+`, d.search, $1::tsquery) DESC, d.id DESC`, p...)
			want, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			for _, desc := range []bool{true, false} {
				f := quire.DocumentFilter{Visibility: vis, Search: search, SortBy: "relevance", Desc: desc, Limit: 7}
				var got []string
				for page := 0; page*f.Limit <= len(want)+f.Limit; page++ {
					f.Offset = page * f.Limit
					docs, total, err := db.ListDocuments(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if total != len(want) {
						t.Fatalf("search %q %+v offset %d: total %d, want %d", search, vis, f.Offset, total, len(want))
					}
					for _, d := range docs {
						got = append(got, d.ID)
					}
				}
				w := slices.Clone(want)
				if !desc {
					slices.Reverse(w)
				}
				if !slices.Equal(got, w) {
					t.Fatalf("search %q %+v desc=%v:\n got %q\nwant %q", search, vis, desc, got, w)
				}
			}
		}
	}
}

// TestSearchTurns: searches beyond the node's turns wait rather than pile
// onto the server, a waiting search gives up when its caller does, and
// many at once all finish.
func TestSearchTurns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openStarted(t, migrated(t))
	u := storetest.NewEditor(t, db, "u@example.com")
	d := &quire.Document{Title: "Deploy guide", ContentType: "plain", Status: "draft", Visibility: "public", OwnerID: u.ID}
	if err := db.CreateDocument(ctx, d, time.Now()); err != nil {
		t.Fatal(err)
	}
	search := quire.DocumentFilter{Visibility: quire.Visibility{All: true}, Search: "deploy", SortBy: "relevance", Desc: true, Limit: 20}
	if n := cap(db.searches); n != 5 {
		t.Fatalf("%d turns with the default pool of 10, want 5", n)
	}

	// Every turn taken: a search waits, and gives up with its caller.
	for range cap(db.searches) {
		db.searches <- struct{}{}
	}
	waiting, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, _, err := db.ListDocuments(waiting, search)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a search ran with every turn taken: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting search whose caller gave up: %v, want context.Canceled", err)
	}
	// A list without a search needs no turn.
	if _, total, err := db.ListDocuments(ctx, quire.DocumentFilter{Visibility: quire.Visibility{All: true}, Limit: 20}); err != nil || total != 1 {
		t.Fatalf("a list without a search while the turns are taken: total %d, %v", total, err)
	}
	for range cap(db.searches) {
		<-db.searches
	}

	// Many at once: all finish, each with the document.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			docs, total, err := db.ListDocuments(ctx, search)
			if err == nil && (total != 1 || len(docs) != 1) {
				err = fmt.Errorf("total %d, %d documents", total, len(docs))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(db.searches) != 0 {
		t.Fatalf("%d turns still taken", len(db.searches))
	}
}

// TestSearchOutlivesStatementTimeout: a search runs under its own
// statement timeout, not the store's (here 5 ms, which ranking 3,000
// matches outlasts), so that a long search is not answered as a stuck one.
// Not parallel: it depends on how long statements take, which tests beside
// it would change.
func TestSearchOutlivesStatementTimeout(t *testing.T) {
	ctx := t.Context()
	url := migrated(t)
	db := openStarted(t, url)
	u := storetest.NewEditor(t, db, "u@example.com")
	r := rand.New(rand.NewPCG(18, 3))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda")
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for i := range 3000 {
		w := make([]string, 200)
		for j := range w {
			w[j] = words[r.IntN(len(words))]
		}
		d := &quire.Document{Title: "alpha " + w[0], Content: strings.Join(w, " "), ContentType: "plain", Status: "draft",
			Visibility: "public", OwnerID: u.ID}
		if err := db.CreateDocument(ctx, d, at.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE documents`); err != nil {
		t.Fatal(err)
	}
	// The store on a pool whose statements time out after 5 ms, made
	// without Open, whose own statements (ping, migrations, backfills)
	// would not all fit in that on a loaded machine.
	cfg, err := parseConfig(url + "&statement_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	impatient := &DB{pool: pool, searches: make(chan struct{}, 1)}
	t.Cleanup(func() { impatient.Close() })
	docs, total, err := impatient.ListDocuments(ctx, quire.DocumentFilter{Visibility: quire.Visibility{All: true},
		Search: "alpha beta gamma", SortBy: "relevance", Desc: true, Limit: 20})
	if err != nil || total != 3000 || len(docs) != 20 {
		t.Fatalf("a search with statement_timeout=5ms: total %d, %d documents, %v; want 3000, 20, no error", total, len(docs), err)
	}
}
