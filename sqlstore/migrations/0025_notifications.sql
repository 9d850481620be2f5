-- Mentions, watching and notifications (product.md section 19).
--
-- A watch of a document, or of a folder, which covers every document in it
-- and in its subfolders, now and later: the fan-out walks up from a
-- document to its folders, so a folder watch costs one row whatever it
-- holds. A watch goes with its document (a purge), folder or user.
CREATE TABLE document_watches (
	document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	created_at  {{.Time}},
	PRIMARY KEY (document_id, user_id)
){{.WithoutRowid}};
CREATE INDEX document_watches_user ON document_watches (user_id, document_id);
CREATE TABLE folder_watches (
	folder_id  TEXT NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	created_at {{.Time}},
	PRIMARY KEY (folder_id, user_id)
){{.WithoutRowid}};
CREATE INDEX folder_watches_user ON folder_watches (user_id, folder_id);

-- The events to fan out, queued in the transaction that records them (an
-- event of quire.NotifyActions) and deleted by the worker's transaction
-- that writes their notifications: a save never waits for its watchers.
-- mentions is a JSON array of the user ids the change mentions anew (at
-- most quire.MaxMentions); ignored counts the further ones.
CREATE TABLE notify_queue (
	seq         {{.Serial}},
	action      TEXT NOT NULL,
	document_id TEXT NOT NULL,
	comment_id  TEXT NOT NULL DEFAULT '',
	actor_id    TEXT NOT NULL DEFAULT '',
	mentions    TEXT NOT NULL DEFAULT '[]',
	ignored     INTEGER NOT NULL DEFAULT 0,
	at          {{.Time}}
);

-- One notification of one person. It is listed only while its reader
-- sees its document (a join at read time); it goes with its document or
-- its user. comment_id names no row: the comment may be deleted and the
-- notification still says what happened. An unread document_updated is
-- one per person and document: a later change refreshes it. mail is what
-- is left to mail of it: 'instant' (a mention or a reply to a person who
-- gets mail at once), '' (nothing).
CREATE TABLE notifications (
	id          TEXT PRIMARY KEY,
	user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	kind        TEXT NOT NULL CHECK (kind IN ('mention', 'comment', 'reply', 'resolved', 'document_updated')),
	document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	comment_id  TEXT NOT NULL DEFAULT '',
	actor_id    TEXT NOT NULL DEFAULT '',
	excerpt     TEXT NOT NULL DEFAULT '',
	created_at  {{.Time}},
	read_at     {{.MaybeTime}},
	mail        TEXT NOT NULL DEFAULT ''
);
-- A person's notifications, newest first, and the unread ones.
CREATE INDEX notifications_user ON notifications (user_id, created_at, id);
CREATE INDEX notifications_unread ON notifications (user_id, created_at, id)
	WHERE {{if .SQLite}}read_at = 0{{else}}read_at IS NULL{{end}};
CREATE UNIQUE INDEX notifications_coalesce ON notifications (user_id, document_id)
	WHERE kind = 'document_updated' AND {{if .SQLite}}read_at = 0{{else}}read_at IS NULL{{end}};
CREATE INDEX notifications_mail ON notifications (created_at) WHERE mail <> '';
CREATE INDEX notifications_document ON notifications (document_id);

-- A person's mail setting (no row: instant) and when the last digest went,
-- which the node that sends the next one claims.
CREATE TABLE notification_settings (
	user_id        TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
	email          TEXT NOT NULL CHECK (email IN ('instant', 'digest', 'off')),
	digest_sent_at {{.MaybeTime}},
	updated_at     {{.Time}}
);

-- The one-click unsubscribe address (RFC 8058) of a mail, "" for none.
ALTER TABLE outbox ADD COLUMN unsubscribe TEXT NOT NULL DEFAULT '';
