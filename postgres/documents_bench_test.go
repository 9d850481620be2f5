package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/pgtest"
	"quire/sqlstore"
	"quire/storetest"
)

// The document benchmarks of package storetest, on databases of 10,000 and
// 100,000 documents (storetest.BenchSizes) of about 2 KB: the same data and
// operations as sqlite/documents_bench_test.go, so the two compare. Run
// them with, for example:
//
//	go test -run '^$' -bench 'Documents/(List|Search|Read|GuardedUpdate)' -benchtime 3s -count 3 ./postgres/
//
// Each database is seeded once per server, with COPY, into a database named
// for its size and a hash of the schema and of the generator
// (quire_bench_<key>_<n>), and kept: the read benchmarks use it as it is
// and the guarded update a copy made from it as a template. On the
// throwaway server of package pgtest that cache lasts one `go test` run
// (every -count and benchmark of it); on a server named by
// QUIRE_TEST_POSTGRES_URL it lasts until the schema or the generator
// changes.

// databaseURL is base (a database URL of pgtest) naming database name.
func databaseURL(tb testing.TB, base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// openBenchDB opens the seeded database of n documents, seeding it first
// when the server has none. With scratch set it opens a private copy, for
// benchmarks that write.
func openBenchDB(b *testing.B, n int, scratch bool) *storetest.BenchFixture {
	b.Helper()
	ctx := context.Background()
	base := pgtest.Start(b) // skips b loudly when there is no PostgreSQL
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close(ctx)

	name := fmt.Sprintf("quire_bench_%s_%d", storetest.BenchKey(b, sqlstore.MigrationFiles()), n)
	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if !exists {
		start := time.Now()
		if err := buildBenchDB(ctx, admin, base, name, n); err != nil {
			b.Fatalf("build bench database of %d documents: %v", n, err)
		}
		b.Logf("seeded %s in %v", name, time.Since(start).Round(time.Millisecond))
	}
	if scratch {
		var r [4]byte
		rand.Read(r[:])
		copyName := name + "_scratch_" + hex.EncodeToString(r[:])
		// FILE_COPY copies the files whole, much faster than the default
		// (WAL_LOG, PostgreSQL 15) for a database of this size.
		strategy := ""
		var version int
		if err := admin.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
			b.Fatal(err)
		}
		if version >= 150000 {
			strategy = " STRATEGY = FILE_COPY"
		}
		if _, err := admin.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{copyName}.Sanitize()+
			` TEMPLATE `+pgx.Identifier{name}.Sanitize()+strategy); err != nil {
			b.Fatalf("copy %s: %v", name, err)
		}
		b.Cleanup(func() {
			c, err := pgx.Connect(context.Background(), base)
			if err != nil {
				b.Errorf("drop %s: %v", copyName, err)
				return
			}
			defer c.Close(context.Background())
			if _, err := c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+pgx.Identifier{copyName}.Sanitize()+` WITH (FORCE)`); err != nil {
				b.Errorf("drop %s: %v", copyName, err)
			}
		})
		name = copyName
	}
	db, err := Open(ctx, databaseURL(b, base, name))
	if err != nil {
		b.Fatal(err)
	}
	// Registered after the copy's drop, so it runs first: no session of
	// ours is left on a database that is dropped or copied next.
	b.Cleanup(func() { db.Close() })
	return storetest.NewBenchFixture(b, db)
}

// buildBenchDB creates database name on the server of admin, migrates it
// and writes storetest.NewBenchData(n) into it: the small tables with
// INSERT, the documents, their tags and versions 1 with COPY (the search
// vector computed by searchVector, as CreateDocument does), with the
// secondary indexes of those tables dropped during the load and then
// rebuilt from their own definitions. It builds under another name and
// renames at the end, so that an interrupted build is never taken for a
// finished one.
func buildBenchDB(ctx context.Context, admin *pgx.Conn, base, name string, n int) error {
	building := pgx.Identifier{name + "_building"}.Sanitize()
	if _, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+building); err != nil {
		return err
	}
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	u.Path, u.RawPath = "/"+name+"_building", ""
	db, err := Open(ctx, u.String())
	if err != nil {
		return err
	}
	db.Close() // migrated: the load needs a session without the pool's statement timeout
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return err
	}
	if err := seedBench(ctx, conn, storetest.NewBenchData(n)); err != nil {
		conn.Close(ctx)
		return err
	}
	if err := conn.Close(ctx); err != nil {
		return err
	}
	_, err = admin.Exec(ctx, `ALTER DATABASE `+building+` RENAME TO `+pgx.Identifier{name}.Sanitize())
	return err
}

func seedBench(ctx context.Context, conn *pgx.Conn, data *storetest.BenchData) error {
	if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '256MB'`); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, d := range data.Departments {
			if _, err := tx.Exec(ctx, `INSERT INTO departments (id, name) VALUES ($1, $2)`, d.ID, d.Name); err != nil {
				return err
			}
		}
		for _, u := range data.Users {
			if _, err := tx.Exec(ctx, `INSERT INTO users (id, email, name, role_key, department_id, status, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, u.ID, u.Email, u.Name, u.Role.Key, nullString(u.DepartmentID),
				string(u.Status), micro(u.CreatedAt), micro(u.UpdatedAt)); err != nil {
				return err
			}
		}
		for _, p := range data.Projects {
			if _, err := tx.Exec(ctx, `INSERT INTO projects (id, name) VALUES ($1, $2)`, p.ID, p.Name); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO project_members (project_id, user_id) SELECT $1, unnest($2::text[])`,
				p.ID, p.MemberIDs); err != nil {
				return err
			}
		}
		for _, f := range data.Folders {
			if _, err := tx.Exec(ctx, `INSERT INTO folders (id, name, parent_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)`,
				f.ID, f.Name, nullString(f.ParentID), micro(f.CreatedAt), micro(f.UpdatedAt)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}

	// Secondary indexes (not those of a constraint) are rebuilt after the
	// load, which is several times faster than keeping them up row by row.
	rows, err := conn.Query(ctx, `SELECT ic.relname, pg_get_indexdef(i.indexrelid)
		FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
		WHERE t.relname IN ('documents', 'document_tags', 'document_versions')
		  AND t.relnamespace = current_schema()::regnamespace
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`)
	if err != nil {
		return err
	}
	type index struct{ Name, Def string }
	indexes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[index])
	if err != nil {
		return err
	}
	for _, ix := range indexes {
		if _, err := conn.Exec(ctx, `DROP INDEX `+pgx.Identifier{ix.Name}.Sanitize()); err != nil {
			return err
		}
	}

	const batch = 5000
	var docs, tags, versions bytes.Buffer
	flush := func() error {
		for _, c := range []struct {
			buf *bytes.Buffer
			sql string
		}{
			{&docs, `COPY documents (id, title, summary, content_type, status, visibility, folder_id, department_id,
				project_id, owner_id, version, created_at, updated_at, content, search) FROM STDIN`},
			{&tags, `COPY document_tags (document_id, position, tag, tag_norm) FROM STDIN`},
			{&versions, `COPY document_versions (document_id, number, title, summary, content_type, status, visibility,
				tags, folder_id, department_id, project_id, created_at, created_by, content) FROM STDIN`},
		} {
			if c.buf.Len() == 0 {
				continue
			}
			if _, err := conn.PgConn().CopyFrom(ctx, c.buf, c.sql); err != nil {
				return err
			}
			c.buf.Reset()
		}
		return nil
	}
	count := 0
	err = data.Documents(func(d *quire.Document) error {
		at := copyTime(d.CreatedAt)
		copyRow(&docs, d.ID, d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, nullString(d.FolderID),
			nullString(d.DepartmentID), nullString(d.ProjectID), d.OwnerID, "1", at, at, d.Content,
			searchVector(d.Title, d.Summary, d.Content, d.Tags))
		for pos, t := range d.Tags {
			copyRow(&tags, d.ID, fmt.Sprint(pos), t, strings.ToLower(strings.TrimSpace(t)))
		}
		copyRow(&versions, d.ID, "1", d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, copyArray(d.Tags),
			nullString(d.FolderID), nullString(d.DepartmentID), nullString(d.ProjectID), at, d.OwnerID, d.Content)
		if count++; count%batch == 0 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	for _, ix := range indexes {
		if _, err := conn.Exec(ctx, ix.Def); err != nil {
			return fmt.Errorf("rebuild %s: %w", ix.Name, err)
		}
	}
	// What any bulk load ends with: statistics for the planner, and the
	// visibility map that lets index-only scans skip the table.
	_, err = conn.Exec(ctx, `VACUUM (ANALYZE)`)
	return err
}

var copyEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`)

// copyRow appends one row in COPY's text format: tab-separated, with
// backslash escapes. A field is a string, or nil for NULL (\N).
func copyRow(buf *bytes.Buffer, fields ...any) {
	for i, f := range fields {
		if i > 0 {
			buf.WriteByte('\t')
		}
		switch f := f.(type) {
		case nil:
			buf.WriteString(`\N`)
		case string:
			copyEscaper.WriteString(buf, f)
		default:
			panic(fmt.Sprintf("copyRow: field of type %T", f))
		}
	}
	buf.WriteByte('\n')
}

// copyTime writes a time for a timestamptz column, to the microsecond.
func copyTime(t time.Time) string { return micro(t).Format("2006-01-02 15:04:05.999999") + "+00" }

// copyArray writes a text[] literal, every element quoted.
func copyArray(ss []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// BenchmarkDocuments runs the benchmarks of storetest.RunBenches.
func BenchmarkDocuments(b *testing.B) { storetest.RunBenches(b, openBenchDB) }
