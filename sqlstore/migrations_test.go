package sqlstore_test

import (
	"slices"
	"strings"
	"testing"

	"quire/sqlstore"
)

// The migrations render for each engine without a template left in them,
// and each engine gets exactly the migrations, by name, that it recorded
// before they were written once: a database migrated then applies nothing
// again.
func TestMigrationsRender(t *testing.T) {
	common := []string{"0001_core.sql", "0002_documents.sql", "0003_mail.sql", "0004_document_counts.sql",
		"0006_redeem_requests.sql", "0007_idempotency_keys.sql", "0008_trash.sql", "0009_settings.sql",
		"0010_audit.sql", "0011_api_tokens.sql", "0012_admin.sql", "0013_attachments.sql",
		"0014_document_links.sql", "0015_search_tags.sql", "0016_sso.sql", "0017_mfa.sql",
		"0018_passkeys.sql", "0019_webhooks.sql", "0023_comments.sql",
		"0024_shares.sql", "0025_notifications.sql", "0026_comment_seq.sql", "0027_live.sql",
		"0028_live_versions.sql", "0029_live_clients.sql", "0030_comment_threads.sql", "0031_comment_threads_seq.sql",
		"0032_audit_target_action.sql", "0034_live_clients_by_person.sql"}
	want := map[string][]string{
		"sqlite":   append(slices.Clone(common), "0005_fts_by_store.sql", "0021_document_changes.sql", "0022_fts_source_portable.sql"),
		"postgres": append(slices.Clone(common), "0005_search_index_direct.sql", "0020_list_tags.sql", "0033_document_changes_postgres.sql"),
	}
	for engine, names := range want {
		slices.Sort(names)
		ms, err := sqlstore.Migrations(engine)
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.Name)
			for _, bad := range []string{"{{", "}}", "<no value>"} {
				if strings.Contains(m.SQL, bad) {
					t.Errorf("%s %s: rendered text holds %q", engine, m.Name, bad)
				}
			}
		}
		if !slices.Equal(got, names) {
			t.Errorf("%s: migrations %v, want %v", engine, got, names)
		}
	}
	if _, err := sqlstore.Migrations("mysql"); err == nil {
		t.Error("an unknown engine got migrations")
	}
}

// Each engine's words reach its text: PostgreSQL never sees SQLite's types
// and SQLite never sees PostgreSQL's.
func TestMigrationsWords(t *testing.T) {
	for engine, foreign := range map[string][]string{
		"sqlite":   {"bytea", "boolean", "CONSTRAINT", "jsonb", "tsvector", "plpgsql"},
		"postgres": {"BLOB", "WITHOUT ROWID", "fts5", "AUTOINCREMENT"},
	} {
		ms, err := sqlstore.Migrations(engine)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			for _, w := range foreign {
				if strings.Contains(m.SQL, w) {
					t.Errorf("%s %s holds %q", engine, m.Name, w)
				}
			}
		}
	}
}
