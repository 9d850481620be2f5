// Package stores sums the store operations written once for both engines:
// the shared core (package sqlstore) and the store of each capability,
// written beside its rules (webhook, mail, mfa, passkey, sso, audit, auth).
// sqlite.DB and postgres.DB embed a Set, so that each is a quire.Store, the
// sum, for wiring only.
package stores

import (
	"quire/audit"
	"quire/auth"
	"quire/mail"
	"quire/mfa"
	"quire/passkey"
	"quire/sqlstore"
	"quire/sso"
	"quire/webhook"
)

// Set is every store operation written once, running on one Engine.
type Set struct {
	*sqlstore.Store
	*webhook.WebhookSQL
	*mail.OutboxSQL
	*mfa.MFASQL
	*passkey.PasskeySQL
	*sso.SSOSQL
	*audit.AuditSQL
	*auth.AuthSQL
}

// New returns the operations of e.
func New(e sqlstore.Engine) Set {
	return Set{sqlstore.New(e), webhook.NewSQL(e), mail.NewSQL(e), mfa.NewSQL(e), passkey.NewSQL(e), sso.NewSQL(e),
		audit.NewSQL(e), auth.NewSQL(e)}
}
