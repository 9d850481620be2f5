package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"quire"
)

var _ quire.PasskeyStore = (*DB)(nil)

const passkeyColumns = `p.id, p.user_id, p.credential_id, p.name, p.public_key, p.sign_count, p.transports,
	p.aaguid, p.flags, p.created_at, p.last_used_at`

func scanPasskey(scan func(dest ...any) error, extra ...any) (quire.Passkey, error) {
	var (
		p                 quire.Passkey
		transports        string
		created, lastUsed int64
		signCount         int64
		flags             int64
	)
	err := scan(append([]any{&p.ID, &p.UserID, &p.CredentialID, &p.Name, &p.PublicKey, &signCount, &transports,
		&p.AAGUID, &flags, &created, &lastUsed}, extra...)...)
	p.SignCount, p.Flags = uint32(signCount), byte(flags)
	if transports != "" {
		p.Transports = strings.Split(transports, ",")
	}
	p.CreatedAt, p.LastUsedAt = fromMicros(created), fromMicros(lastUsed)
	return p, err
}

func (db *DB) CreatePasskey(ctx context.Context, p *quire.Passkey) error {
	if len(p.CredentialID) == 0 || len(p.PublicKey) == 0 {
		return errors.New("create passkey: empty credential id or public key")
	}
	id := newID()
	quire.NameCreated(db.events, id)
	aaguid := p.AAGUID
	if aaguid == nil {
		aaguid = []byte{}
	}
	_, err := db.exec(ctx, `INSERT INTO passkeys
		(id, user_id, credential_id, name, public_key, sign_count, transports, aaguid, flags, created_at, last_used_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, p.UserID, p.CredentialID, p.Name, p.PublicKey, int64(p.SignCount), strings.Join(p.Transports, ","),
		aaguid, int64(p.Flags), toMicros(p.CreatedAt), toMicros(p.LastUsedAt))
	if isUnique(err) {
		return &quire.Error{Code: quire.ECONFLICT, Message: "This passkey is registered already",
			Fields: map[string]string{"credential": "is registered already"}}
	}
	if err != nil {
		return fmt.Errorf("create passkey: %w", db.noteWrite(err))
	}
	db.noteChange()
	p.ID = id
	return nil
}

func (db *DB) Passkeys(ctx context.Context, userID string) ([]quire.Passkey, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+passkeyColumns+` FROM passkeys p
		WHERE p.user_id = ? ORDER BY p.created_at, p.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list passkeys: %w", err)
	}
	defer rows.Close()
	var out []quire.Passkey
	for rows.Next() {
		p, err := scanPasskey(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("list passkeys: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list passkeys: %w", err)
	}
	return out, nil
}

func (db *DB) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*quire.Passkey, *quire.User, error) {
	var p quire.Passkey
	user, err := scanUser(func(dest ...any) error {
		var err error
		p, err = scanPasskey(db.read.QueryRowContext(ctx, `SELECT `+passkeyColumns+`, `+userColumns+`
			FROM passkeys p
			JOIN users u ON u.id = p.user_id
			`+userJoins+`
			WHERE p.credential_id = ?`, credentialID).Scan, dest...)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, notFound("passkey")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read passkey: %w", err)
	}
	return &p, user, nil
}

// RenamePasskey and DeletePasskey decide ENOTFOUND inside their
// transaction, so that the events they record go only with a change.
func (db *DB) RenamePasskey(ctx context.Context, userID, id, name string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateOne(ctx, tx, "passkey", `UPDATE passkeys SET name = ? WHERE id = ? AND user_id = ?`, name, id, userID)
	})
}

func (db *DB) DeletePasskey(ctx context.Context, userID, id string) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateOne(ctx, tx, "passkey", `DELETE FROM passkeys WHERE id = ? AND user_id = ?`, id, userID)
	})
}

// PasskeyUsed never moves the last-use time backwards.
func (db *DB) PasskeyUsed(ctx context.Context, id string, signCount uint32, flags byte, at time.Time) error {
	return db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return updateOne(ctx, tx, "passkey", `UPDATE passkeys SET sign_count = ?, flags = ?,
			last_used_at = max(last_used_at, ?) WHERE id = ?`, int64(signCount), int64(flags), toMicros(at), id)
	})
}

func (db *DB) HasPasskey(ctx context.Context, userID string) (bool, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM passkeys WHERE user_id = ? LIMIT 1)`,
		userID).Scan(&n); err != nil {
		return false, fmt.Errorf("has passkey: %w", err)
	}
	return n > 0, nil
}

// ceremonyPruneBatch bounds the expired ceremonies one begin deletes.
const ceremonyPruneBatch = 100

func (db *DB) BeginPasskeyCeremony(ctx context.Context, c *quire.PasskeyCeremony, now time.Time, perAddr int) error {
	nowUs := toMicros(now)
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash IN
			(SELECT challenge_hash FROM passkey_ceremonies WHERE expires_at <= ? LIMIT ?)`, nowUs, ceremonyPruneBatch); err != nil {
			return fmt.Errorf("prune passkey ceremonies: %w", err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM passkey_ceremonies
			WHERE addr = ? AND expires_at > ?`, c.Addr, nowUs).Scan(&n); err != nil {
			return fmt.Errorf("count passkey ceremonies: %w", err)
		}
		if perAddr > 0 && n >= perAddr {
			if _, err := tx.ExecContext(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash IN
				(SELECT challenge_hash FROM passkey_ceremonies WHERE addr = ? AND expires_at > ?
				 ORDER BY expires_at LIMIT ?)`, c.Addr, nowUs, n-perAddr+1); err != nil {
				return fmt.Errorf("make room for a passkey ceremony: %w", err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO passkey_ceremonies (challenge_hash, kind, user_id, addr, data, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, c.ChallengeHash, c.Kind, c.UserID, c.Addr, c.Data, toMicros(c.ExpiresAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("begin passkey ceremony: %w", err)
	}
	return nil
}

func (db *DB) TakePasskeyCeremony(ctx context.Context, kind string, challengeHash []byte, now time.Time) (*quire.PasskeyCeremony, error) {
	var (
		c       quire.PasskeyCeremony
		expires int64
		found   bool
	)
	err := db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash = ? AND kind = ?
			RETURNING challenge_hash, kind, user_id, addr, data, expires_at`, challengeHash, kind).
			Scan(&c.ChallengeHash, &c.Kind, &c.UserID, &c.Addr, &c.Data, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("take passkey ceremony: %w", err)
	}
	if !found || expires <= toMicros(now) {
		return nil, notFound("passkey ceremony")
	}
	c.ExpiresAt = fromMicros(expires)
	return &c, nil
}
