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
