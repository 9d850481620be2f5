package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"quire"
)

var _ quire.Settings = (*DB)(nil)

// SetSetting stores value under key, replacing an earlier value.
func (db *DB) SetSetting(ctx context.Context, key, value string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		if err != nil {
			return fmt.Errorf("set setting %s: %w", key, err)
		}
		return nil
	})
}

// Setting returns the value under key; ENOTFOUND when there is none.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := db.read.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("setting")
	}
	if err != nil {
		return "", fmt.Errorf("read setting %s: %w", key, err)
	}
	return v, nil
}
