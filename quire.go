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
//	attachments  files of documents: limits, sniffed types, how they are served
//	passkey    passkeys (WebAuthn): register, rename, remove, sign in with one
//	mail       message templates, SMTP sender, outbox worker
//	sqlite     the stores on SQLite (embedded default)
//	postgres   the stores on PostgreSQL (several nodes on one database)
//	storetest  the suite every store must pass
//
//	cmd → httpapi → auth, docs, audit, mail → quire ← sqlite, postgres
//	httpapi → passkey → auth, quire (a passkey sign-in opens an ordinary session)
//
// Rules (who may see or change what) live in auth and docs, never in a store:
// a store is told exactly what to filter on through the types defined here.
package quire
