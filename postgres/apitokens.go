package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.APITokenStore = (*DB)(nil)

func (db *DB) CreateAPIToken(ctx context.Context, t *quire.APIToken) error {
	if len(t.TokenHash) == 0 {
		return errors.New("create api token: empty token hash")
	}
	id := newID()
	quire.NameCreated(db.events, id)
	_, err := db.exec(ctx, "", `INSERT INTO api_tokens
		(id, user_id, name, scope, token_hash, created_at, expires_at, last_used_at, revoked_at, ip, user_agent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		id, t.UserID, t.Name, string(t.Scope), t.TokenHash, micro(t.CreatedAt), micro(t.ExpiresAt),
		nullTime(t.LastUsedAt), nullTime(t.RevokedAt), t.IP, t.UserAgent)
	if err != nil {
		return db.fail(ctx, "create api token", err)
	}
	t.ID = id
	return nil
}

// APITokenByHash reads the token and its user in one query through the
// unique index of token_hash, as SessionByTokenHash does for a session.
func (db *DB) APITokenByHash(ctx context.Context, hash []byte) (*quire.APIToken, *quire.User, error) {
	var (
		t                 quire.APIToken
		scope             string
		lastUsed, revoked *time.Time
	)
	user, err := scanUser(func(dest ...any) error {
		dest = append([]any{&t.ID, &t.Name, &scope, &t.TokenHash, &t.CreatedAt, &t.ExpiresAt, &lastUsed, &revoked}, dest...)
		return db.pool.QueryRow(ctx, `SELECT t.id, t.name, t.scope, t.token_hash,
			t.created_at, t.expires_at, t.last_used_at, t.revoked_at,
			`+userColumns+`
			FROM api_tokens t
			JOIN users u ON u.id = t.user_id
			`+userJoins+`
			WHERE t.token_hash = $1`, hash).Scan(dest...)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, notFound("api token")
	}
	if err != nil {
		return nil, nil, db.fail(ctx, "read api token", err)
	}
	t.UserID, t.Scope = user.ID, quire.TokenScope(scope)
	t.CreatedAt, t.ExpiresAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC()
	t.LastUsedAt, t.RevokedAt = timeOf(lastUsed), timeOf(revoked)
	return &t, user, nil
}

func (db *DB) APITokens(ctx context.Context, userID string, now time.Time) ([]quire.APIToken, error) {
	if hasNUL(userID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id, name, scope, created_at, expires_at, last_used_at, ip, user_agent
		FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2
		ORDER BY created_at DESC, id DESC`, userID, micro(now))
	if err != nil {
		return nil, db.fail(ctx, "list api tokens", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.APIToken, error) {
		var (
			t        quire.APIToken
			scope    string
			lastUsed *time.Time
		)
		err := row.Scan(&t.ID, &t.Name, &scope, &t.CreatedAt, &t.ExpiresAt, &lastUsed, &t.IP, &t.UserAgent)
		t.UserID, t.Scope = userID, quire.TokenScope(scope)
		t.CreatedAt, t.ExpiresAt, t.LastUsedAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC(), timeOf(lastUsed)
		return t, err
	})
	if err != nil {
		return nil, db.fail(ctx, "list api tokens", err)
	}
	return out, nil
}

// TouchAPIToken never moves the last-use time backwards, so that two nodes
// touching the same token with slightly different clocks keep the later.
func (db *DB) TouchAPIToken(ctx context.Context, tokenID string, at time.Time) error {
	return db.updateOneRow(ctx, "api token", tokenID,
		`UPDATE api_tokens SET last_used_at = greatest(last_used_at, $1) WHERE id = $2`, micro(at), tokenID)
}

func (db *DB) RevokeAPIToken(ctx context.Context, userID, tokenID string, at time.Time) error {
	if hasNUL(userID) {
		return notFound("api token")
	}
	return db.updateOneRow(ctx, "api token", tokenID, `UPDATE api_tokens SET revoked_at = $1
		WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL AND expires_at > $1`, micro(at), tokenID, userID)
}

// revokeAPITokens revokes every token of userID still valid. The
// transactions that end a user's credentials (DisableUser, RedeemToken)
// call it beside revokeSessions.
func revokeAPITokens(ctx context.Context, q querier, userID string, at time.Time) error {
	if hasNUL(userID) {
		return nil // no such user
	}
	_, err := q.Exec(ctx, `UPDATE api_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL`,
		micro(at), userID)
	return err
}

func (db *DB) UserSessions(ctx context.Context, userID string, now time.Time) ([]quire.Session, error) {
	if hasNUL(userID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id, created_at, expires_at, last_used_at, ip, user_agent
		FROM sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2
		ORDER BY created_at DESC, id DESC`, userID, micro(now))
	if err != nil {
		return nil, db.fail(ctx, "list sessions", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Session, error) {
		var s quire.Session
		err := row.Scan(&s.ID, &s.CreatedAt, &s.ExpiresAt, &s.LastUsedAt, &s.IP, &s.UserAgent)
		s.UserID = userID
		s.CreatedAt, s.ExpiresAt, s.LastUsedAt = s.CreatedAt.UTC(), s.ExpiresAt.UTC(), s.LastUsedAt.UTC()
		return s, err
	})
	if err != nil {
		return nil, db.fail(ctx, "list sessions", err)
	}
	return out, nil
}

func (db *DB) RevokeUserSession(ctx context.Context, userID, sessionID string, at time.Time) error {
	if hasNUL(userID) {
		return notFound("session")
	}
	return db.updateOneRow(ctx, "session", sessionID, `UPDATE sessions SET revoked_at = $1
		WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL AND expires_at > $1`, micro(at), sessionID, userID)
}

// updateOneRow runs an UPDATE that should match the one row named id, and
// returns ENOTFOUND naming what when it matched none, decided inside the
// transaction that writes the recorded events.
func (db *DB) updateOneRow(ctx context.Context, what, id, query string, args ...any) error {
	if hasNUL(id) {
		return notFound(what)
	}
	_, err := db.exec(ctx, what, query, args...)
	return db.fail(ctx, "update "+what, err)
}
