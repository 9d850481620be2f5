-- Values a running server shares with the admin commands run on the same
-- database, such as public_url: the --public-url of the last quire serve
-- started on it, the base of the links that quire user invite mails.
CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
