package main

import (
	"context"
	"strings"

	"quire"
	"quire/postgres"
	"quire/sqlite"
)

// openStore opens the database named by dsn: a postgres:// URL, or a SQLite
// file path. Both migrate on open.
func openStore(ctx context.Context, dsn string) (quire.Store, error) {
	if isPostgres(dsn) {
		return postgres.Open(ctx, dsn)
	}
	return sqlite.Open(ctx, strings.TrimPrefix(dsn, "sqlite:"))
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
