// Package quire is the vocabulary of the quire documentation service: users,
// roles, documents, versions and folders, the one error type, and the store
// interfaces that persistence adapters implement.
//
// The layout, and the direction of imports:
//
//	cmd/quire  the binary: flags, environment, signals, the admin CLI; the
//	           composition root, which builds every service once and
//	           mounts the API and the pages side by side (routes.go: the
//	           API's paths to httpapi, every other path to web)
//	httpapi    the JSON API: routes.go lists every route; handlers, the
//	           front (request id, metrics, log line) of both
//	web        the pages: server-rendered HTML, forms, the bundled editor
//	auth       sign-in, sessions, login limits and locks, password flows,
//	           the administration of users, departments, projects, roles
//	documents  documents, versions, folders, search; builds the visibility filter
//	audit      reads the audit log (who may, filters, cursor) and prunes it
//	idempotency  the Idempotency-Key of writes: claims, kept answers
//	wire       what a change answers (DOCUMENT, a folder, an attachment, a
//	           message; ETag, Location) as bytes, with no HTTP: httpapi's
//	           live answers and the stores' kept ones (quire.Keep)
//	mfa        the second factor: TOTP set-up, codes, recovery codes, requireMfa
//	secretkey  the server's secret key: seals stored secrets, derives keys
//	attachments  files of documents: limits, sniffed types, how they are served
//	passkey    passkeys (WebAuthn): register, rename, remove, sign in with one
//	sso        single sign-on with OpenID Connect: the flow, the ID token,
//	           which user that is; the session is auth's
//	mail       message templates, SMTP sender, outbox worker
//	sqlstore   the shared SQL layer both engines run: Engine, Dialect, the
//	           helpers, the operations whose capability has no package
//	stores     the sum of the stores written once (sqlstore's and each
//	           capability's, in its sql sub-package: webhook/webhooksql,
//	           mail/mailsql, mfa/mfasql, passkey/passkeysql, sso/ssosql,
//	           audit/auditsql, auth/authsql), which the engines embed
//	sqlite     the SQLite engine (embedded default): group commit, statement
//	           cache, full-text search, the index of documents, backup
//	postgres   the PostgreSQL engine (several nodes on one database):
//	           advisory locks, full-text search, backup
//	docindex   the index of documents in memory (SQLite's searches and lists)
//	storetest  the suite every store must pass
//	pgtest     a throwaway PostgreSQL cluster for tests
//	textdiff   bounded line and word diffs, the unified format (documents, web)
//	textsearch search words, and the highlights of a page of results
//	transfer   export to a zip of Markdown, import of a zip or a folder
//	webhook    receivers of audit events: registration, the address guard,
//	           the delivery worker over the store's webhook outbox
//	bench      the load harness (go run ./bench)
//	internal/  apiclient (the CLI's client), buildinfo, errstatus (the HTTP
//	           status of each error code, for httpapi and web), notice,
//	           oidctest, proc, slug (heading anchors), testclock, testpass (a
//	           test password's cheap hash), tmpfs (test databases in
//	           memory), userjson (USER of the contract, for httpapi and the
//	           CLI's --json records)
//
//	cmd → httpapi, web → auth, documents, audit, mail → quire
//	sqlite, postgres → stores → webhooksql, mailsql, mfasql, passkeysql, ssosql, auditsql, authsql → sqlstore → wire → quire
//	auth → mfa → secretkey → quire
//	httpapi → passkey → auth, quire (a passkey sign-in opens an ordinary session)
//	web → sso → auth
//
// web never imports httpapi. Each service declares beside it the narrow
// store it uses (auth.Store, documents.Store, ...); Store here is their sum,
// which the engines implement and only cmd/quire hands to the services. A
// service that records audit events takes a Recorder of the writes it
// records (auth.Recorded, ...); a change made under an idempotency key
// is given its quire.Keep the same way, as a value (Keeping).
//
// Rules (who may see or change what) live in auth and documents, never in a store:
// a store is told exactly what to filter on through the types defined here.
package quire
