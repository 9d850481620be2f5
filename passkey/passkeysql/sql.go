// Package passkeysql is the store of passkeys and their ceremonies, written
// once for SQLite and PostgreSQL on a sqlstore.Engine. Package passkey holds
// the rules.
package passkeysql

import (
	"context"
	"errors"
	"strings"
	"time"

	"quire"
	"quire/sqlstore"
)

const passkeyColumns = `p.id, p.user_id, p.credential_id, p.name, p.public_key, p.sign_count, p.transports,
	p.aaguid, p.flags, p.created_at, p.last_used_at`

// scanPasskey reads the columns of passkeyColumns, followed by extra.
func scanPasskey(scan func(dest ...any) error, extra ...any) (quire.Passkey, error) {
	var p quire.Passkey
	var transports string
	var signCount, flags int64
	err := scan(append([]any{&p.ID, &p.UserID, &p.CredentialID, &p.Name, &p.PublicKey, &signCount, &transports,
		&p.AAGUID, &flags, sqlstore.T(&p.CreatedAt), sqlstore.T(&p.LastUsedAt)}, extra...)...)
	p.SignCount, p.Flags = uint32(signCount), byte(flags)
	if transports != "" {
		p.Transports = strings.Split(transports, ",")
	}
	return p, err
}

func (s *PasskeySQL) CreatePasskey(ctx context.Context, p *quire.Passkey) error {
	if len(p.CredentialID) == 0 || len(p.PublicKey) == 0 {
		return errors.New("create passkey: empty credential id or public key")
	}
	if err := sqlstore.NoNUL(map[string]string{"name": p.Name, "transports": strings.Join(p.Transports, "")}); err != nil {
		return err
	}
	id := sqlstore.NewID()
	quire.NameCreated(s.E.Events(), id)
	aaguid := p.AAGUID
	if aaguid == nil {
		aaguid = []byte{}
	}
	_, err := s.E.ExecOne(ctx, "", `INSERT INTO passkeys
		(id, user_id, credential_id, name, public_key, sign_count, transports, aaguid, flags, created_at, last_used_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, p.UserID, p.CredentialID, p.Name, p.PublicKey, int64(p.SignCount), strings.Join(p.Transports, ","),
		aaguid, int64(p.Flags), s.D.Time(p.CreatedAt), s.D.Time(p.LastUsedAt))
	// The id is a new UUID: the unique constraint broken is the credential
	// id's.
	if s.D.IsUnique(err) {
		return &quire.Error{Code: quire.ECONFLICT, Message: "This passkey is registered already",
			Fields: map[string]string{"credential": "is registered already"}}
	}
	if err != nil {
		return s.E.Fail(ctx, "create passkey", err)
	}
	p.ID = id
	return nil
}

func (s *PasskeySQL) Passkeys(ctx context.Context, userID string) ([]quire.Passkey, error) {
	if sqlstore.HasNUL(userID) {
		return nil, nil
	}
	out, err := sqlstore.Collect(ctx, s.E.Read(), func(scan func(dest ...any) error) (quire.Passkey, error) {
		return scanPasskey(scan)
	}, `SELECT `+passkeyColumns+` FROM passkeys p WHERE p.user_id = ? ORDER BY p.created_at, p.id`, userID)
	return out, s.E.Fail(ctx, "list passkeys", err)
}

// PasskeyByCredentialID reads the passkey and its user in one query, so
// that the role and department are those of this moment.
func (s *PasskeySQL) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*quire.Passkey, *quire.User, error) {
	var p quire.Passkey
	user, err := sqlstore.ScanUser(func(dest ...any) error {
		var err error
		p, err = scanPasskey(s.E.Read().QueryRow(ctx, `SELECT `+passkeyColumns+`, `+sqlstore.UserColumns+`
			FROM passkeys p
			JOIN users u ON u.id = p.user_id
			`+sqlstore.UserJoins+`
			WHERE p.credential_id = ?`, credentialID).Scan, dest...)
		return err
	})
	if err != nil {
		return nil, nil, s.E.Fail(ctx, "read passkey", sqlstore.Found(err, "passkey"))
	}
	return &p, user, nil
}

func (s *PasskeySQL) RenamePasskey(ctx context.Context, userID, id, name string) error {
	if err := sqlstore.NoNUL(map[string]string{"name": name}); err != nil {
		return err
	}
	return sqlstore.UpdateOne(ctx, s.E, "passkey", id+userID, `UPDATE passkeys SET name = ? WHERE id = ? AND user_id = ?`, name, id, userID)
}

func (s *PasskeySQL) DeletePasskey(ctx context.Context, userID, id string) error {
	return sqlstore.UpdateOne(ctx, s.E, "passkey", id+userID, `DELETE FROM passkeys WHERE id = ? AND user_id = ?`, id, userID)
}

// PasskeyUsed never moves the last-use time backwards.
func (s *PasskeySQL) PasskeyUsed(ctx context.Context, id string, signCount uint32, flags byte, at time.Time) error {
	return sqlstore.UpdateOne(ctx, s.E, "passkey", id, `UPDATE passkeys SET sign_count = ?, flags = ?,
		last_used_at = `+s.D.Greatest+`(last_used_at, ?) WHERE id = ?`, int64(signCount), int64(flags), s.D.Time(at), id)
}

func (s *PasskeySQL) HasPasskey(ctx context.Context, userID string) (bool, error) {
	if sqlstore.HasNUL(userID) {
		return false, nil
	}
	var ok bool
	err := s.E.Read().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM passkeys WHERE user_id = ?)`, userID).Scan(&ok)
	return ok, s.E.Fail(ctx, "has passkey", err)
}

// ceremonyPruneBatch bounds the expired ceremonies one begin deletes.
const ceremonyPruneBatch = 100

// BeginPasskeyCeremony counts the address's live ceremonies and inserts
// another as one step: under the address's advisory lock on PostgreSQL,
// whose nodes begin at the same time; SQLite's writer is alone. The prune
// of expired ones skips the rows another node's prune holds.
func (s *PasskeySQL) BeginPasskeyCeremony(ctx context.Context, c *quire.PasskeyCeremony, now time.Time, perAddr int) error {
	if sqlstore.HasNUL(c.Addr, c.UserID) {
		return quire.Invalid(map[string]string{"text": sqlstore.MsgNUL})
	}
	at := s.D.Time(now)
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if err := s.D.Lock(ctx, q, sqlstore.LockPasskeyCeremonies, c.Addr); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash IN
			(SELECT challenge_hash FROM passkey_ceremonies WHERE expires_at <= ? LIMIT ?`+s.D.Locked(" FOR UPDATE SKIP LOCKED")+`)`,
			at, ceremonyPruneBatch); err != nil {
			return err
		}
		var n int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM passkey_ceremonies WHERE addr = ? AND expires_at > ?`,
			c.Addr, at).Scan(&n); err != nil {
			return err
		}
		if perAddr > 0 && n >= perAddr {
			if _, err := q.Exec(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash IN
				(SELECT challenge_hash FROM passkey_ceremonies WHERE addr = ? AND expires_at > ?
				 ORDER BY expires_at LIMIT ?)`, c.Addr, at, n-perAddr+1); err != nil {
				return err
			}
		}
		_, err := q.Exec(ctx, `INSERT INTO passkey_ceremonies (challenge_hash, kind, user_id, addr, data, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, c.ChallengeHash, c.Kind, c.UserID, c.Addr, c.Data, s.D.Time(c.ExpiresAt))
		return err
	})
	return s.E.Fail(ctx, "begin passkey ceremony", err)
}

// TakePasskeyCeremony deletes the row and reads it back in one statement:
// of two finishes on any nodes, the second finds nothing to delete.
func (s *PasskeySQL) TakePasskeyCeremony(ctx context.Context, kind string, challengeHash []byte, now time.Time) (*quire.PasskeyCeremony, error) {
	var c quire.PasskeyCeremony
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		return q.QueryRow(ctx, `DELETE FROM passkey_ceremonies WHERE challenge_hash = ? AND kind = ?
			RETURNING challenge_hash, kind, user_id, addr, data, expires_at`, challengeHash, kind).
			Scan(&c.ChallengeHash, &c.Kind, &c.UserID, &c.Addr, &c.Data, sqlstore.T(&c.ExpiresAt))
	})
	if err != nil {
		return nil, s.E.Fail(ctx, "take passkey ceremony", sqlstore.Found(err, "passkey ceremony"))
	}
	if !c.ExpiresAt.After(now) {
		return nil, sqlstore.NotFound("passkey ceremony")
	}
	return &c, nil
}

// PasskeySQL is quire.PasskeyStore written once for both engines, which
// embed it.
type PasskeySQL struct{ sqlstore.Base }

// NewSQL returns the store of passkeys on e.
func NewSQL(e sqlstore.Engine) *PasskeySQL { return &PasskeySQL{sqlstore.NewBase(e)} }

var _ quire.PasskeyStore = (*PasskeySQL)(nil)
