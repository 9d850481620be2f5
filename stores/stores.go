// Package stores sums the store operations written once for both engines:
// the shared core (package sqlstore) and the store of each capability,
// in a sub-package beside its rules (webhook/webhooksql, mail/mailsql,
// mfa/mfasql, passkey/passkeysql, sso/ssosql, audit/auditsql, auth/authsql,
// comments/commentssql, share/sharesql, notify/notifysql, live/livesql),
// which imports sqlstore and quire only: the engines never import a service.
// sqlite.DB and postgres.DB embed a Set, so that each is a quire.Store, the
// sum, for wiring only.
package stores

import (
	"context"
	"time"

	"quire/audit/auditsql"
	"quire/auth/authsql"
	"quire/comments/commentssql"
	"quire/live/livesql"
	"quire/mail/mailsql"
	"quire/mfa/mfasql"
	"quire/notify/notifysql"
	"quire/passkey/passkeysql"
	"quire/share/sharesql"
	"quire/sqlstore"
	"quire/sso/ssosql"
	"quire/webhook/webhooksql"
)

// Set is every store operation written once, running on one Engine.
type Set struct {
	*sqlstore.Store
	*webhooksql.WebhookSQL
	*mailsql.OutboxSQL
	*mfasql.MFASQL
	*passkeysql.PasskeySQL
	*ssosql.SSOSQL
	*auditsql.AuditSQL
	*authsql.AuthSQL
	*commentssql.CommentSQL
	*sharesql.ShareSQL
	*notifysql.NotifySQL
	*livesql.LiveSQL
}

// New returns the operations of e. A write of a document's content
// re-anchors its comments and supersedes its live changes in its
// transaction.
func New(e sqlstore.Engine) Set {
	core, comments := sqlstore.New(e), commentssql.NewSQL(e)
	live := livesql.NewSQL(e, core)
	core.ContentChanged = func(ctx context.Context, q sqlstore.Q, id, contentType, was, content, byUserID string, at time.Time) error {
		if err := comments.Reanchor(ctx, q, id, contentType, content); err != nil {
			return err
		}
		return live.ContentWritten(ctx, q, id, was, content, byUserID, at)
	}
	return Set{core, webhooksql.NewSQL(e), mailsql.NewSQL(e), mfasql.NewSQL(e), passkeysql.NewSQL(e), ssosql.NewSQL(e),
		auditsql.NewSQL(e), authsql.NewSQL(e), comments, sharesql.NewSQL(e), notifysql.NewSQL(e), live}
}
