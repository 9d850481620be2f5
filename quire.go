// Package quire is the vocabulary of the quire documentation service: users,
// roles, documents, versions and folders, the one error type, and the store
// interfaces that persistence adapters implement.
//
// The layout, and the direction of imports:
//
//	cmd/quire  the binary: flags, environment, signals, the admin CLI
//	httpapi    the JSON API: routes.go lists every route; handlers, middleware
//	auth       sign-in, sessions, login limits and locks, password flows,
//	           the administration of users, departments, projects, roles
//	docs       documents, versions, folders, search; builds the visibility filter
//	audit      reads the audit log (who may, filters, cursor) and prunes it
//	mfa        the second factor: TOTP set-up, codes, recovery codes, requireMfa
//	secretkey  the server's secret key: seals stored secrets, derives keys
//	attachments  files of documents: limits, sniffed types, how they are served
//	passkey    passkeys (WebAuthn): register, rename, remove, sign in with one
//	sso        single sign-on with OpenID Connect: the flow, the ID token,
//	           which user that is; the session is auth's
//	mail       message templates, SMTP sender, outbox worker
//	sqlite     the stores on SQLite (embedded default)
//	postgres   the stores on PostgreSQL (several nodes on one database)
//	storetest  the suite every store must pass
//	textdiff   bounded line and word diffs, the unified format (docs, web)
//	textsearch search words, and the highlights of a page of results
//	transfer   export to a zip of Markdown, import of a zip or a folder
//	webhook    receivers of audit events: registration, the address guard,
//	           the delivery worker over the store's webhook outbox
//
//	cmd → httpapi → auth, docs, audit, mail → quire ← sqlite, postgres
//	auth → mfa → secretkey → quire
//	httpapi → passkey → auth, quire (a passkey sign-in opens an ordinary session)
//	cmd → web → sso → auth
//
// Rules (who may see or change what) live in auth and docs, never in a store:
// a store is told exactly what to filter on through the types defined here.
package quire
