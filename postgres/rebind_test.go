package postgres

import "testing"

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`SELECT '?' || ? FROM t`, `SELECT '?' || $1 FROM t`},
		{`SELECT 'it''s ?', ? FROM "we?rd"`, `SELECT 'it''s ?', $1 FROM "we?rd"`},
		{"SELECT ? -- what?\n, ?", "SELECT $1 -- what?\n, $2"},
		{`SELECT $1 FROM t`, `SELECT $1 FROM t`},
		{`SELECT 'open ?`, `SELECT 'open ?`},
		{"SELECT 1 -- ?", "SELECT 1 -- ?"},
		{`SELECT a - ? FROM t`, `SELECT a - $1 FROM t`},
	} {
		if got := rebindText(c.in); got != c.want {
			t.Errorf("rebindText(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := rebind(c.in); got != c.want {
			t.Errorf("rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func BenchmarkRebind(b *testing.B) {
	q := `SELECT s.id, s.token_hash, s.created_at, s.expires_at, s.last_used_at, s.revoked_at, u.id, u.email, u.name
		FROM sessions s JOIN users u ON u.id = s.user_id JOIN roles r ON r.key = u.role_key
		LEFT JOIN departments d ON d.id = u.department_id WHERE s.token_hash = ? AND s.revoked_at IS NULL AND x = ?`
	for b.Loop() {
		rebind(q)
	}
}
