package postgres

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"quire/sqlstore"
)

// backupTables are quire's tables in an order that satisfies their foreign
// keys when loaded one after the other; folders get their own query, which
// puts parents before children. Every table of the schema is either here
// or in rebuiltTables: TestBackupNamesEveryTable reads the catalog and
// fails on a table that is neither, so a migration that adds a table must
// say what its backup does with it.
var backupTables = []string{
	"roles", "departments", "users", "projects", "project_members", "sessions",
	"login_failures", "login_locks", "one_time_tokens", "reset_requests", "redeem_requests", "outbox",
	"folders", "documents", "document_tags", "document_versions", "document_links", "schema_migrations",
	"comments", "comment_reactions", "comment_versions", "shares", "live_documents", "live_changes", "version_authors", "live_presence",
	"live_clients",
	"document_watches", "folder_watches", "notify_queue", "notifications", "notification_settings",
	"settings", "audit_events", "api_tokens", "idempotency_keys",
	"attachments", "attachment_chunks",
	"webhooks", "webhook_patterns", "webhook_deliveries",
	"passkeys", "passkey_ceremonies",
	"sso_identities", "sso_flows",
	"mfa_totp", "mfa_recovery_codes", "mfa_tokens",
}

// rebuiltTables are the tables a backup does not copy, because restoring
// the copied ones fills them: document_counts is kept by a trigger on
// documents, which COPY fires row by row; document_changes likewise, and
// the nodes build their index of documents from the restored rows.
var rebuiltTables = []string{"document_counts", "document_changes", "document_changes_trimmed"}

// backupSequences are the sequences of serial columns, set after the rows
// are loaded so that the next row numbers follow the copied ones.
var backupSequences = map[string]string{"webhook_deliveries": "seq", "notify_queue": "seq", "documents": "seq"}

// Backup writes a consistent copy of the database to w as a plain SQL
// script, without pg_dump (whose version must match the server's): it
// reads every table in one REPEATABLE READ snapshot while the service keeps
// running, and writes the schema (the embedded migrations the database has
// applied) followed by each table's rows in COPY format. Restore it into an
// empty database with
//
//	psql -v ON_ERROR_STOP=1 --single-transaction -d NEWDB -f backup.sql
//
// after which quire opens that database as it was.
func (db *DB) Backup(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		// A large database takes longer to copy than a statement may last.
		if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SET LOCAL TimeZone = 'UTC'`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT name FROM schema_migrations`)
		if err != nil {
			return err
		}
		applied, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "-- quire PostgreSQL backup, taken %s from one consistent snapshot.\n",
			time.Now().UTC().Format(time.RFC3339))
		fmt.Fprint(bw, "-- Restore into an empty database:\n"+
			"--   psql -v ON_ERROR_STOP=1 --single-transaction -d NEWDB -f this-file.sql\n\n"+
			"SET client_encoding = 'UTF8';\nSET standard_conforming_strings = on;\nSET TimeZone = 'UTC';\n\n")
		if err := writeSchema(bw, applied); err != nil {
			return err
		}
		for _, table := range backupTables {
			if err := copyTable(ctx, tx, bw, table); err != nil {
				return fmt.Errorf("table %s: %w", table, err)
			}
		}
		for _, table := range backupTables {
			if col, ok := backupSequences[table]; ok {
				fmt.Fprintf(bw, "SELECT setval(pg_get_serial_sequence('%s', '%s'), coalesce((SELECT max(%s) FROM %s), 0) + 1, false);\n",
					table, col, col, table)
			}
		}
		return bw.Flush()
	})
	return db.fail(ctx, "backup", err)
}

// writeSchema writes the migrations the database has applied, in order,
// and then empties what they seeded (the default roles, settings): the
// copied rows replace it. A database migrated by a newer quire cannot be written by
// this one.
func writeSchema(w io.Writer, applied []string) error {
	migrations, err := sqlstore.Migrations("postgres")
	if err != nil {
		return err
	}
	for _, name := range applied {
		if !slices.ContainsFunc(migrations, func(m sqlstore.Migration) bool { return m.Name == name }) {
			return fmt.Errorf("the database has migration %s, which this quire does not know", name)
		}
	}
	fmt.Fprintf(w, "%s;\n\n", schemaMigrationsDDL)
	for _, m := range migrations {
		if !slices.Contains(applied, m.Name) {
			continue
		}
		fmt.Fprintf(w, "-- migration %s\n%s\n", m.Name, m.SQL)
	}
	// Migrations seed roles, and settings (0014's note that the links of
	// older documents are still to be read): the copied rows say what the
	// source had, and a seeded key the source still has would clash.
	fmt.Fprint(w, "-- The rows below replace what the migrations seeded.\nDELETE FROM roles;\nDELETE FROM settings;\n\n")
	return nil
}

// copyTable writes the rows of table as a COPY ... FROM stdin block, the
// columns named as the database has them.
func copyTable(ctx context.Context, tx pgx.Tx, w *bufio.Writer, table string) error {
	rows, err := tx.Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return err
	}
	columns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(columns) == 0 {
		return fmt.Errorf("no columns")
	}
	list := ""
	for i, c := range columns {
		if i > 0 {
			list += ", "
		}
		list += pgx.Identifier{c}.Sanitize()
	}
	name := pgx.Identifier{table}.Sanitize()
	source := "SELECT " + list + " FROM " + name
	if table == "folders" {
		// Parents first, so that each row's parent_id is already loaded.
		source = `WITH RECURSIVE tree AS (
				SELECT f.id, 0 AS depth FROM folders f WHERE f.parent_id IS NULL
				UNION ALL
				SELECT f.id, tree.depth + 1 FROM folders f JOIN tree ON f.parent_id = tree.id
			)
			SELECT ` + list + ` FROM folders JOIN tree USING (id) ORDER BY tree.depth, id`
	}
	fmt.Fprintf(w, "COPY %s (%s) FROM stdin;\n", name, list)
	// The COPY data goes to w directly; CopyTo reads the table in the
	// transaction's snapshot.
	if _, err := tx.Conn().PgConn().CopyTo(ctx, w, "COPY ("+source+") TO STDOUT"); err != nil {
		return err
	}
	fmt.Fprint(w, "\\.\n\n")
	return nil
}
