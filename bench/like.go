package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	_ "modernc.org/sqlite"
)

// The like-scan ceiling answers search-status's query the way a
// PocketBase-style service does: a LIKE '%word%' on every text column, no
// full-text index, the total from a COUNT and the page from a second query,
// through database/sql. It runs as its own process (pinned like quire) on
// the run's own database, so search-status's ratio to it says how much
// quire's search gains over a table scan on the same data and cores.

// likeQuery is the WHERE clause of both statements: live documents of one
// status that user may see (quire's visibility rule of sqlite/documents.go
// visibleSQL and postgres/documents.go visible, in plain SQL, the user's
// department read in the statement) holding the pattern $1 in a text column.
// $1 is the pattern, $2 the status, $3 the user's id.
func likeQuery(store string) string {
	live, like := `d.deleted_at = 0`, `LIKE`
	if store == "postgres" {
		live, like = `d.deleted_at IS NULL`, `ILIKE` // SQLite's LIKE is case-insensitive for ASCII
	}
	q := `FROM documents d WHERE ` + live + ` AND d.status = $2
	AND (d.owner_id = $3 OR d.visibility = 'public'
		OR (d.visibility = 'department' AND d.department_id = (SELECT u.department_id FROM users u WHERE u.id = $3))
		OR (d.visibility = 'project' AND d.project_id IN (SELECT pm.project_id FROM project_members pm WHERE pm.user_id = $3)))
	AND (d.title ` + like + ` $1 ESCAPE '\' OR d.summary ` + like + ` $1 ESCAPE '\' OR d.content ` + like + ` $1 ESCAPE '\')`
	if store == "sqlite" {
		q = strings.ReplaceAll(q, "$", "?") // ?N: SQLite's numbered parameters
	}
	return q
}

// likePattern is %w% with LIKE's own characters escaped.
func likePattern(w string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(w) + "%"
}

// openLike opens dsn read-only with the pool quire itself would use for its
// reads on this process's cores: SQLite max(4, cores) connections (with
// PocketBase's pragmas), PostgreSQL 10.
func openLike(store, dsn string) (*sql.DB, error) {
	switch store {
	case "sqlite":
		q := url.Values{}
		for _, p := range []string{"busy_timeout(10000)", "temp_store(MEMORY)", "cache_size(-32000)", "query_only(ON)"} {
			q.Add("_pragma", p)
		}
		q.Set("mode", "ro")
		db, err := sql.Open("sqlite", "file:"+dsn+"?"+q.Encode())
		if err != nil {
			return nil, err
		}
		n := max(4, runtime.GOMAXPROCS(0))
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
		return db, nil
	case "postgres":
		db, err := sql.Open("pgx", dsn+"&default_transaction_read_only=on")
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(10)
		db.SetMaxIdleConns(10)
		return db, nil
	}
	return nil, fmt.Errorf("like: unknown store %q", store)
}

// likeItem is a document of the like server's page.
type likeItem struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Summary   string `json:"summary"`
	Status    string `json:"status"`
	UpdatedAt string `json:"updated_at"`
}

// serveLike is the like-scan server: GET /like?w=WORD&status=S&user=ID
// answers the count of the documents and the first page of 20, newest
// first, as PocketBase lists records (page, perPage, totalItems,
// totalPages, items).
func serveLike(store, dsn, addr string, stdout io.Writer) error {
	db, err := openLike(store, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		return fmt.Errorf("like: open %s: %w", store, err)
	}
	where := likeQuery(store)
	countSQL := `SELECT count(*) ` + where
	pageSQL := `SELECT d.id, d.title, d.summary, d.status, d.updated_at ` + where +
		` ORDER BY d.updated_at DESC, d.id DESC LIMIT 20`
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	const perPage = 20
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		word, status, user := q.Get("w"), q.Get("status"), q.Get("user")
		if r.URL.Path != "/like" || word == "" || status == "" || user == "" {
			http.Error(w, "want GET /like?w=WORD&status=S&user=ID", http.StatusBadRequest)
			return
		}
		ctx := r.Context()
		pattern := likePattern(word)
		var total int
		if err := db.QueryRowContext(ctx, countSQL, pattern, status, user).Scan(&total); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		items, err := likePage(ctx, db, store, pageSQL, pattern, status, user)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"page": 1, "perPage": perPage, "totalItems": total,
			"totalPages": (total + perPage - 1) / perPage, "items": items})
	}))
}

func likePage(ctx context.Context, db *sql.DB, store, pageSQL string, args ...any) ([]likeItem, error) {
	rows, err := db.QueryContext(ctx, pageSQL, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := []likeItem{}
	for rows.Next() {
		var (
			it     likeItem
			micros int64     // SQLite: microseconds since the epoch
			ts     time.Time // PostgreSQL: timestamptz
			at     any       = &micros
		)
		if store == "postgres" {
			at = &ts
		}
		if err := rows.Scan(&it.ID, &it.Title, &it.Summary, &it.Status, at); err != nil {
			return nil, err
		}
		if store == "sqlite" {
			ts = time.UnixMicro(micros)
		}
		it.UpdatedAt = ts.UTC().Format(time.RFC3339Nano)
		items = append(items, it)
	}
	return items, rows.Err()
}

// likeCeiling starts the like server on the server's cores over dsn and
// drives it with the same load generator and concurrency as quire, with
// the same words, status and user as search-status. It returns the figures
// and the total of the first query as the like server counted it.
func (b *bench) likeCeiling(ctx context.Context, cpus, store, dsn, userID string) (stats, int, error) {
	c, err := startChild(pinned(cpus, b.self, "_like", store, dsn, "127.0.0.1:0"), filepath.Join(b.cfg.out, "like-"+store+".log"))
	if err != nil {
		return stats{}, 0, err
	}
	defer c.stop()
	base := "http://" + c.addr
	var ts []vegeta.Target
	for _, w := range statusSearchWords() {
		q := url.Values{"w": {w}, "status": {searchStatus}, "user": {userID}}
		ts = append(ts, vegeta.Target{Method: "GET", URL: base + "/like?" + q.Encode()})
	}
	var first struct{ TotalItems int }
	if err := getJSON(ctx, ts[0].URL, nil, &first); err != nil {
		return stats{}, 0, fmt.Errorf("like server: %w", err)
	}
	l := load{name: "like", targets: rotating(ts), conc: b.cfg.conc, client: newClient(b.cfg.conc, nil)}
	if b.cfg.warmup > 0 {
		l.run(ctx, b.cfg.warmup)
	}
	st := l.run(ctx, b.cfg.dur)
	if st.errs > 0 {
		return st, 0, fmt.Errorf("like server: %d errors: %s", st.errs, st.firstErr)
	}
	return st, first.TotalItems, nil
}

// getJSON reads u (with hdr) and decodes its 200 answer into out.
func getJSON(ctx context.Context, u string, hdr http.Header, out any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	req.Header = hdr.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", u, resp.StatusCode, firstLine(b))
	}
	return json.Unmarshal(b, out)
}

// userID reads the id of the session's user.
func (s *session) userID(ctx context.Context) (string, error) {
	var out struct{ User struct{ ID string } }
	if err := getJSON(ctx, s.base+"/api/auth/me", s.hdr, &out); err != nil {
		return "", err
	}
	return out.User.ID, nil
}

// likeLine measures and prints the like-scan ceiling of search-status, with
// the number of documents the first word finds by LIKE and by quire's
// search (a LIKE finds the word inside others too, quire only as a word or
// the start of one), and returns its req/s.
func (b *bench) likeLine(ctx context.Context, tag, cpus, store, dsn string, e *env) (float64, error) {
	user, err := e.editor.userID(ctx)
	if err != nil {
		return 0, err
	}
	st, likeTotal, err := b.likeCeiling(ctx, cpus, store, dsn, user)
	if err != nil {
		return 0, err
	}
	w := statusSearchWords()[0]
	var quireFirst struct{ Pagination struct{ Total int } }
	q := url.Values{"limit": {"20"}, "search": {w}, "status": {searchStatus}}
	if err := getJSON(ctx, e.base+docsPath+"?"+q.Encode(), e.editor.hdr, &quireFirst); err != nil {
		return 0, err
	}
	b.print(line{key: tag + " ceiling like-scan", rps: st.rps(), p50: ms(st.p50), p99: ms(st.p99), errs: st.errs, n: st.n,
		ratio: 1, ceilingName: "like",
		extra: fmt.Sprintf("%q status=%s: %d documents by LIKE, %d by quire's search", w, searchStatus, likeTotal, quireFirst.Pagination.Total)})
	return st.rps(), nil
}
