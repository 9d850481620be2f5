package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	type settings struct {
		ConnectTimeout                          time.Duration
		MaxConns                                int32
		StatementTimeout, IdleInTx, Application string
	}
	read := func(t *testing.T, url string) settings {
		t.Helper()
		cfg, err := parseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		p := cfg.ConnConfig.RuntimeParams
		return settings{cfg.ConnConfig.ConnectTimeout, cfg.MaxConns,
			p["statement_timeout"], p["idle_in_transaction_session_timeout"], p["application_name"]}
	}

	t.Run("a bare URL gets the defaults", func(t *testing.T) {
		got := read(t, "postgres://quire@db.example/quire")
		want := settings{5 * time.Second, 10, "5s", "30s", "quire"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("settings (-want +got):\n%s", diff)
		}
	})

	t.Run("the URL overrides every default", func(t *testing.T) {
		got := read(t, "postgres://quire@db.example/quire?connect_timeout=2&pool_max_conns=3"+
			"&statement_timeout=1min&idle_in_transaction_session_timeout=0&application_name=node-1")
		want := settings{2 * time.Second, 3, "1min", "0", "node-1"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("settings (-want +got):\n%s", diff)
		}
	})

	t.Run("a malformed URL is an error that does not show the password", func(t *testing.T) {
		_, err := parseConfig("postgres://quire:hunter2@db.example:notaport/quire")
		if err == nil {
			t.Fatal("no error")
		}
		if got := err.Error(); strings.Contains(got, "hunter2") {
			t.Errorf("error %q shows the password", got)
		}
	})
}
