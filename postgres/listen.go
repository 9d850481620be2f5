package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// listenCheck is how long a listening connection may stay silent before it
// is pinged: a connection whose peer vanished without closing it (a node
// cut off, a proxy restarted) fails no read until then.
const listenCheck = 30 * time.Second

// Notify sends payload to every session listening on channel, on every
// node of the database, through NOTIFY. Payloads are small (PostgreSQL
// takes at most 8000 bytes): ids that say what to read, not what changed.
// A notification sent in no transaction is delivered at once.
func (db *DB) Notify(ctx context.Context, channel, payload string) error {
	_, err := db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload)
	return db.fail(ctx, "notify "+channel, err)
}

// Listen listens on channel on a connection of its own, outside the pool,
// until ctx is done or the connection fails, and returns why (ctx's error
// when it is done). Once LISTEN holds it calls listening, then got with the
// payload of each notification, in the order they were sent, on the
// caller's goroutine: got must not block for long, since notifications
// queue up in the server meanwhile. What was sent while no connection
// listened is lost; the caller reconnects and catches up from the tables.
func (db *DB) Listen(ctx context.Context, channel string, listening func(), got func(payload string)) error {
	cfg := db.pool.Config().ConnConfig.Copy()
	// Waiting for notifications is no statement, but LISTEN is one; a
	// listener runs none that could get stuck.
	cfg.RuntimeParams["statement_timeout"] = "0"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return db.fail(ctx, "listen", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
		return db.fail(ctx, "listen", err)
	}
	listening()
	for {
		wait, cancel := context.WithTimeout(ctx, listenCheck)
		n, err := conn.WaitForNotification(wait)
		cancel()
		switch {
		case err == nil:
			got(n.Payload)
		case ctx.Err() == nil && pgconn.Timeout(err):
			// Silence: a deadline leaves the connection usable; a ping
			// that fails too means it is gone.
			ping, cancel := context.WithTimeout(ctx, defaultConnectTimeout)
			err = conn.Ping(ping)
			cancel()
			if err != nil {
				return db.fail(ctx, "listen", err)
			}
		default:
			return db.fail(ctx, "listen", err)
		}
	}
}
