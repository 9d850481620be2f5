package sqlstore

import (
	"context"
)

// SetSetting stores value under key, replacing an earlier value.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	if err := NoNUL(map[string]string{"key": key, "value": value}); err != nil {
		return err
	}
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		_, err := q.Exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
	return s.e.Fail(ctx, "set setting "+key, err)
}

// Setting returns the value under key; ENOTFOUND when there is none.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	if HasNUL(key) {
		return "", NotFound("setting")
	}
	var v string
	err := s.e.Read().QueryRow(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	return v, s.e.Fail(ctx, "read setting "+key, Found(err, "setting"))
}

// InitSetting stores value unless the key has one, and returns the value
// stored. On PostgreSQL, under READ COMMITTED, the insert waits for a
// concurrent one of the same key and then does nothing, and the select that
// follows sees the winner's value; on SQLite the writer is alone.
func (s *Store) InitSetting(ctx context.Context, key, value string) (string, error) {
	if err := NoNUL(map[string]string{"key": key, "value": value}); err != nil {
		return "", err
	}
	var stored string
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		if _, err := q.Exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`,
			key, value); err != nil {
			return err
		}
		return q.QueryRow(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&stored)
	})
	return stored, s.e.Fail(ctx, "init setting "+key, err)
}
