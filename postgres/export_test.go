package postgres

import "github.com/jackc/pgx/v5/pgxpool"

// The backup's lists of tables, for the test that holds them to the catalog.
var BackupTables, RebuiltTables = backupTables, rebuiltTables

// Pool is the store's pool, for tests that read the catalog or whole tables.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }
