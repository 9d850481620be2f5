package sqlstore

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/template"
)

// migrationFiles are the migrations of both engines, each a text/template
// of schemaWords, with the templates of migrations/common.tmpl, executed
// once per engine. A migration only one engine has is wholly in an
// {{if .SQLite}} or {{if .Postgres}} block: it renders to nothing for the
// other, which does not record it.
//
//go:embed migrations
var migrationFiles embed.FS

// Migration is one migration as one engine runs it: the name it is recorded
// by in schema_migrations, and its SQL.
type Migration struct {
	Name string
	SQL  string
}

// schemaWords are the words of the migrations' SQL that differ between the
// engines. SQLite keeps the text of each CREATE statement as written (in
// sqlite_master), so its words are spelled as its migrations always spelt
// them, and a database migrated before the templates has the same schema
// text as one migrated after.
type schemaWords struct {
	SQLite, Postgres bool
	// Bytes is a byte string, NoBytes an empty one as a default.
	Bytes, NoBytes string
	// Time is a time that is always set; MaybeTime one that may be none
	// (SQLite: 0, PostgreSQL: NULL).
	Time, MaybeTime string
	// Bool is a boolean column, True and False its values as defaults.
	Bool, True, False string
	// Int64 and Int16 are integers of those sizes (SQLite has one).
	Int64, Int16 string
	// JSON is a JSON document, UUID a UUID, Strings a list of strings
	// (SQLite: JSON text).
	JSON, UUID, Strings string
	// Serial is an integer primary key the database numbers, never reused.
	Serial string
	// Bytewise follows a text type whose order must be by bytes (SQLite's
	// default already).
	Bytewise string
	// WithoutRowid follows a table's closing parenthesis: SQLite keeps the
	// table in its primary key's order.
	WithoutRowid string
}

var sqliteWords = schemaWords{
	SQLite: true, Bytes: "BLOB", NoBytes: "x''",
	Time: "INTEGER NOT NULL", MaybeTime: "INTEGER NOT NULL DEFAULT 0",
	Bool: "INTEGER", True: "1", False: "0", Int64: "INTEGER", Int16: "INTEGER",
	JSON: "TEXT", UUID: "TEXT", Strings: "TEXT",
	Serial: "INTEGER PRIMARY KEY AUTOINCREMENT", WithoutRowid: " WITHOUT ROWID",
}

var postgresWords = schemaWords{
	Postgres: true, Bytes: "bytea", NoBytes: `'\x'`,
	Time: "timestamptz NOT NULL", MaybeTime: "timestamptz",
	Bool: "boolean", True: "true", False: "false", Int64: "bigint", Int16: "smallint",
	JSON: "jsonb", UUID: "uuid", Strings: "text[]",
	Serial: "bigserial PRIMARY KEY", Bytewise: ` COLLATE "C"`,
}

// rendered holds each engine's migrations, rendered once per process: they
// come from the files embedded in the binary, and every open of a store
// (hundreds in a test process) asks for them.
var rendered = map[string]func() ([]Migration, error){
	"sqlite":   sync.OnceValues(func() ([]Migration, error) { return render(sqliteWords) }),
	"postgres": sync.OnceValues(func() ([]Migration, error) { return render(postgresWords) }),
}

// Migrations returns the migrations of engine ("sqlite" or "postgres"),
// rendered for it, in the order they apply. A file that renders to nothing
// for an engine is not one of its migrations.
func Migrations(engine string) ([]Migration, error) {
	r, ok := rendered[engine]
	if !ok {
		return nil, fmt.Errorf("migrations: unknown engine %q", engine)
	}
	ms, err := r()
	return slices.Clone(ms), err
}

// render renders the migration files with an engine's words.
func render(words schemaWords) ([]Migration, error) {
	// con names a constraint on PostgreSQL, which maps a violation to the
	// field a client sent by its name; SQLite's are anonymous.
	funcs := template.FuncMap{"con": func(name string) string {
		if words.Postgres {
			return "CONSTRAINT " + name + " "
		}
		return ""
	}}
	common, err := template.New("common").Funcs(funcs).Option("missingkey=error").ParseFS(migrationFiles, "migrations/common.tmpl")
	if err != nil {
		return nil, err
	}
	paths, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Migration
	for _, p := range paths {
		name := strings.TrimPrefix(p, "migrations/")
		text, err := migrationFiles.ReadFile(p)
		if err != nil {
			return nil, err
		}
		t, err := template.Must(common.Clone()).New(name).Parse(string(text))
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, words); err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		if strings.TrimSpace(b.String()) == "" {
			continue
		}
		out = append(out, Migration{Name: name, SQL: b.String()})
	}
	return out, nil
}

// MigrationFiles returns the migrations' templates, which the benchmarks
// hash to name the databases they cache.
func MigrationFiles() fs.FS { return migrationFiles }
