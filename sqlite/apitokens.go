package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"quire"
)

var _ quire.APITokenStore = (*DB)(nil)

func (db *DB) CreateAPIToken(ctx context.Context, t *quire.APIToken) error {
	if len(t.TokenHash) == 0 {
		return errors.New("create api token: empty token hash")
	}
	id := newID()
	quire.NameCreated(db.events, id)
	_, err := db.exec(ctx, `INSERT INTO api_tokens
		(id, user_id, name, scope, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, t.UserID, t.Name, string(t.Scope), t.TokenHash, toMicros(t.CreatedAt), toMicros(t.ExpiresAt),
		toMicros(t.LastUsedAt), toMicros(t.RevokedAt), t.IP, t.UserAgent)
	if err != nil {
		return fmt.Errorf("create api token: %w", db.noteWrite(err))
	}
	db.noteChange()
	t.ID = id
	return nil
}

// APITokenByHash reads the token and its user in one query through the
// unique index of token_hash, as SessionByTokenHash does for a session.
func (db *DB) APITokenByHash(ctx context.Context, hash []byte) (*quire.APIToken, *quire.User, error) {
	var (
		t                                   quire.APIToken
		scope                               string
		created, expires, lastUsed, revoked int64
	)
	user, err := scanUser(func(dest ...any) error {
		dest = append([]any{&t.ID, &t.Name, &scope, &t.TokenHash, &created, &expires, &lastUsed, &revoked}, dest...)
		return cachedQuerier{c: db.reads}.QueryRowContext(ctx, `SELECT t.id, t.name, t.scope, t.token_hash,
			t.created_at, t.expires_at, t.last_used_at, t.revoked_at,
			`+userColumns+`
			FROM api_tokens t
			JOIN users u ON u.id = t.user_id
			`+userJoins+`
			WHERE t.token_hash = ?`, hash).Scan(dest...)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, notFound("api token")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read api token: %w", err)
	}
	t.UserID, t.Scope = user.ID, quire.TokenScope(scope)
	t.CreatedAt, t.ExpiresAt = fromMicros(created), fromMicros(expires)
	t.LastUsedAt, t.RevokedAt = fromMicros(lastUsed), fromMicros(revoked)
	return &t, user, nil
}

func (db *DB) APITokens(ctx context.Context, userID string, now time.Time) ([]quire.APIToken, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, scope, created_at, expires_at, last_used_at, ip, user_agent
		FROM api_tokens WHERE user_id = ? AND revoked_at = 0 AND expires_at > ?
		ORDER BY created_at DESC, id DESC`, userID, toMicros(now))
	if err != nil {
		return nil, fmt.Errorf("list api tokens: %w", err)
	}
	defer rows.Close()
	var out []quire.APIToken
	for rows.Next() {
		var (
			t                          quire.APIToken
			scope                      string
			created, expires, lastUsed int64
		)
		if err := rows.Scan(&t.ID, &t.Name, &scope, &created, &expires, &lastUsed, &t.IP, &t.UserAgent); err != nil {
			return nil, fmt.Errorf("list api tokens: %w", err)
		}
		t.UserID, t.Scope = userID, quire.TokenScope(scope)
		t.CreatedAt, t.ExpiresAt, t.LastUsedAt = fromMicros(created), fromMicros(expires), fromMicros(lastUsed)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list api tokens: %w", err)
	}
	return out, nil
}

// TouchAPIToken never moves the last-use time backwards, so that two nodes
// touching the same token with slightly different clocks keep the later.
func (db *DB) TouchAPIToken(ctx context.Context, tokenID string, at time.Time) error {
	return updateOne(ctx, db.write, "api token", `UPDATE api_tokens SET last_used_at = max(last_used_at, ?) WHERE id = ?`,
		toMicros(at), tokenID)
}

// RevokeAPIToken decides ENOTFOUND inside its transaction, so that the
// events it records are written only with a revocation.
func (db *DB) RevokeAPIToken(ctx context.Context, userID, tokenID string, at time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateOne(ctx, tx, "api token", `UPDATE api_tokens SET revoked_at = ?
			WHERE id = ? AND user_id = ? AND revoked_at = 0 AND expires_at > ?`,
			toMicros(at), tokenID, userID, toMicros(at))
	})
}

// revokeAPITokens revokes, inside tx, every token of userID still valid.
// The transactions that end a user's credentials (DisableUser, RedeemToken)
// call it beside revokeSessions.
func revokeAPITokens(ctx context.Context, tx *sql.Tx, userID string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at = 0`,
		toMicros(at), userID)
	if err != nil {
		return fmt.Errorf("revoke api tokens: %w", err)
	}
	return nil
}

func (db *DB) UserSessions(ctx context.Context, userID string, now time.Time) ([]quire.Session, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, created_at, expires_at, last_used_at, ip, user_agent
		FROM sessions WHERE user_id = ? AND revoked_at = 0 AND expires_at > ?
		ORDER BY created_at DESC, id DESC`, userID, toMicros(now))
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []quire.Session
	for rows.Next() {
		var (
			s                          quire.Session
			created, expires, lastUsed int64
		)
		if err := rows.Scan(&s.ID, &created, &expires, &lastUsed, &s.IP, &s.UserAgent); err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		s.UserID = userID
		s.CreatedAt, s.ExpiresAt, s.LastUsedAt = fromMicros(created), fromMicros(expires), fromMicros(lastUsed)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

func (db *DB) RevokeUserSession(ctx context.Context, userID, sessionID string, at time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateOne(ctx, tx, "session", `UPDATE sessions SET revoked_at = ?
			WHERE id = ? AND user_id = ? AND revoked_at = 0 AND expires_at > ?`,
			toMicros(at), sessionID, userID, toMicros(at))
	})
}
