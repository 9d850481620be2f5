package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
)

var _ quire.PasskeyStore = (*DB)(nil)

// lockPasskeyCeremonies is the advisory lock class of one client address's
// passkey ceremonies: the count of its live ones and the insert of another
// are one step for every node.
const lockPasskeyCeremonies = 12

const passkeyColumns = `p.id, p.user_id, p.credential_id, p.name, p.public_key, p.sign_count, p.transports,
	p.aaguid, p.flags, p.created_at, p.last_used_at`

func scanPasskey(scan func(dest ...any) error, extra ...any) (quire.Passkey, error) {
	var (
		p          quire.Passkey
		transports string
		signCount  int64
		flags      int16
		lastUsed   *time.Time
	)
	err := scan(append([]any{&p.ID, &p.UserID, &p.CredentialID, &p.Name, &p.PublicKey, &signCount, &transports,
		&p.AAGUID, &flags, &p.CreatedAt, &lastUsed}, extra...)...)
	p.SignCount, p.Flags = uint32(signCount), byte(flags)
	if transports != "" {
		p.Transports = strings.Split(transports, ",")
	}
	p.CreatedAt, p.LastUsedAt = p.CreatedAt.UTC(), timeOf(lastUsed)
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
	_, err := db.exec(ctx, "", `INSERT INTO passkeys
		(id, user_id, credential_id, name, public_key, sign_count, transports, aaguid, flags, created_at, last_used_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		id, p.UserID, p.CredentialID, p.Name, p.PublicKey, int64(p.SignCount), strings.Join(p.Transports, ","),
		aaguid, int16(p.Flags), micro(p.CreatedAt), nullTime(p.LastUsedAt))
	if code, constraint := pgCode(err); code == codeUnique && constraint == "passkeys_credential_id_key" {
		return &quire.Error{Code: quire.ECONFLICT, Message: "This passkey is registered already",
			Fields: map[string]string{"credential": "is registered already"}}
	}
	if err != nil {
		return db.fail(ctx, "create passkey", err)
	}
	p.ID = id
	return nil
}

func (db *DB) Passkeys(ctx context.Context, userID string) ([]quire.Passkey, error) {
	if hasNUL(userID) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+passkeyColumns+` FROM passkeys p
		WHERE p.user_id = $1 ORDER BY p.created_at, p.id`, userID)
	if err != nil {
		return nil, db.fail(ctx, "list passkeys", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (quire.Passkey, error) {
		return scanPasskey(row.Scan)
	})
	if err != nil {
		return nil, db.fail(ctx, "list passkeys", err)
	}
	return out, nil
}

func (db *DB) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*quire.Passkey, *quire.User, error) {
	var p quire.Passkey
	user, err := scanUser(func(dest ...any) error {
		var err error
		p, err = scanPasskey(db.pool.QueryRow(ctx, `SELECT `+passkeyColumns+`, `+userColumns+`
			FROM passkeys p
			JOIN users u ON u.id = p.user_id
			`+userJoins+`
			WHERE p.credential_id = $1`, credentialID).Scan, dest...)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, notFound("passkey")
	}
	if err != nil {
		return nil, nil, db.fail(ctx, "read passkey", err)
	}
	return &p, user, nil
}

func (db *DB) RenamePasskey(ctx context.Context, userID, id, name string) error {
	if hasNUL(userID) {
		return notFound("passkey")
	}
	return db.updateOneRow(ctx, "passkey", id, `UPDATE passkeys SET name = $1 WHERE id = $2 AND user_id = $3`,
		name, id, userID)
}

func (db *DB) DeletePasskey(ctx context.Context, userID, id string) error {
	if hasNUL(userID) {
		return notFound("passkey")
	}
	return db.updateOneRow(ctx, "passkey", id, `DELETE FROM passkeys WHERE id = $1 AND user_id = $2`, id, userID)
}

// PasskeyUsed never moves the last-use time backwards.
func (db *DB) PasskeyUsed(ctx context.Context, id string, signCount uint32, flags byte, at time.Time) error {
	return db.updateOneRow(ctx, "passkey", id, `UPDATE passkeys SET sign_count = $1, flags = $2,
		last_used_at = greatest(last_used_at, $3) WHERE id = $4`, int64(signCount), int16(flags), micro(at), id)
}

func (db *DB) HasPasskey(ctx context.Context, userID string) (bool, error) {
	if hasNUL(userID) {
		return false, nil
	}
	var ok bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM passkeys WHERE user_id = $1)`, userID).Scan(&ok); err != nil {
		return false, db.fail(ctx, "has passkey", err)
	}
	return ok, nil
}

// ceremonyPruneBatch bounds the expired ceremonies one begin deletes.
const ceremonyPruneBatch = 100

func (db *DB) BeginPasskeyCeremony(ctx context.Context, c *quire.PasskeyCeremony, now time.Time, perAddr int) error {
	if hasNUL(c.Addr, c.UserID) {
		return quire.Invalid(map[string]string{"text": msgNUL})
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := xactLock(ctx, tx, lockPasskeyCeremonies, c.Addr); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash IN
			(SELECT challenge_hash FROM passkey_ceremonies WHERE expires_at <= $1 LIMIT $2
			 FOR UPDATE SKIP LOCKED)`, micro(now), ceremonyPruneBatch); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM passkey_ceremonies
			WHERE addr = $1 AND expires_at > $2`, c.Addr, micro(now)).Scan(&n); err != nil {
			return err
		}
		if perAddr > 0 && n >= perAddr {
			if _, err := tx.Exec(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash IN
				(SELECT challenge_hash FROM passkey_ceremonies WHERE addr = $1 AND expires_at > $2
				 ORDER BY expires_at LIMIT $3)`, c.Addr, micro(now), n-perAddr+1); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO passkey_ceremonies (challenge_hash, kind, user_id, addr, data, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, c.ChallengeHash, c.Kind, c.UserID, c.Addr, c.Data, micro(c.ExpiresAt))
		return err
	})
	if err != nil {
		return db.fail(ctx, "begin passkey ceremony", err)
	}
	return nil
}

func (db *DB) TakePasskeyCeremony(ctx context.Context, kind string, challengeHash []byte, now time.Time) (*quire.PasskeyCeremony, error) {
	var c quire.PasskeyCeremony
	err := db.pool.QueryRow(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash = $1 AND kind = $2
		RETURNING challenge_hash, kind, user_id, addr, data, expires_at`, challengeHash, kind).
		Scan(&c.ChallengeHash, &c.Kind, &c.UserID, &c.Addr, &c.Data, &c.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("passkey ceremony")
	}
	if err != nil {
		return nil, db.fail(ctx, "take passkey ceremony", err)
	}
	if !c.ExpiresAt.After(now) {
		return nil, notFound("passkey ceremony")
	}
	c.ExpiresAt = c.ExpiresAt.UTC()
	return &c, nil
}
