package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.Settings = (*DB)(nil)

// SetSetting stores value under key, replacing an earlier value.
func (db *DB) SetSetting(ctx context.Context, key, value string) error {
	if err := noNUL(map[string]string{"key": key, "value": value}); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return db.fail(ctx, "set setting "+key, err)
}

// Setting returns the value under key; ENOTFOUND when there is none.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	if hasNUL(key) {
		return "", notFound("setting")
	}
	var v string
	err := db.pool.QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", notFound("setting")
	}
	return v, db.fail(ctx, "read setting "+key, err)
}
