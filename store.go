package quire

import (
	"context"
	"io"
	"time"
)

// Store is everything quire persists. sqlite.DB and postgres.DB implement it;
// storetest.Run checks that they agree.
type Store interface {
	UserStore
	SessionStore
	APITokenStore
	LoginGuard
	TokenStore
	Outbox
	DocumentStore
	TrashStore
	FolderStore
	IdempotencyStore
	Settings
	AuditLog
	MFAStore
	AttachmentStore
	StatsStore // stats.go: the figures of /metrics
	WebhookStore
	PasskeyStore
	LinkStore
	SSOStore          // sso.go
	CommentStore      // comment.go
	ShareStore        // share.go
	NotificationStore // notification.go
	LiveStore         // live.go

	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	// Backup writes a consistent copy of the database to w.
	Backup(ctx context.Context, w io.Writer) error
	Close() error
}

// UserStore keeps users, roles, departments and projects.
type UserStore interface {
	// CreateUser inserts u, filling ID (when "") CreatedAt and UpdatedAt. u.Email must
	// be normalised; u.Role.Key must name a role and u.DepartmentID, when set,
	// a department. Returns ECONFLICT when the email is taken, EVALIDATION
	// when the role or department does not exist.
	CreateUser(ctx context.Context, u *User) error
	// UserByID and UserByEmail return the user with role and department
	// filled. Return ENOTFOUND when there is none.
	UserByID(ctx context.Context, id string) (*User, error)
	UserByEmail(ctx context.Context, email string) (*User, error)
	// ListUsers returns every user ordered by email.
	ListUsers(ctx context.Context) ([]User, error)
	// CountUsers returns the number of users.
	CountUsers(ctx context.Context) (int, error)
	// SetUserRole changes a user's role. ENOTFOUND for an unknown user,
	// EVALIDATION for an unknown role, LAST_ADMIN (see below) when the user
	// is the last active administrator and the role is not an admin role.
	//
	// LAST_ADMIN: SetUserRole, DisableUser and PutRole refuse a change that
	// would leave no active user of an admin role where there was one,
	// checked in the same transaction as the change, so that of two
	// parallel demotions of the last two administrators one is refused.
	// Invited and disabled users do not count.
	SetUserRole(ctx context.Context, userID, roleKey string) error
	// SetUserDepartment changes a user's department ("" for none).
	SetUserDepartment(ctx context.Context, userID, departmentID string) error
	// SetUserTimezone stores the user's IANA zone name.
	SetUserTimezone(ctx context.Context, userID, tz string) error
	// DisableUser marks the user disabled and revokes all its sessions in
	// the same transaction. ENOTFOUND for an unknown user, LAST_ADMIN when
	// the user is the last active administrator.
	DisableUser(ctx context.Context, userID string, now time.Time) error
	// EnableUser undoes DisableUser: the user is active again, or invited
	// when it never chose a password. Sessions revoked stay revoked. A user
	// that is not disabled is left as it is. ENOTFOUND for an unknown user.
	EnableUser(ctx context.Context, userID string, now time.Time) error
	// SetPassword stores a new hash and makes the user active (a disabled
	// user stays disabled), and in the same transaction marks every unused
	// one-time token of the user used and deletes its mfa tokens (a
	// password step taken with the old password completes nothing).
	// ENOTFOUND for an unknown user.
	SetPassword(ctx context.Context, userID, hash string, now time.Time) error
	// ReplacePasswordHash stores newHash when the user's hash is still
	// oldHash, and does nothing otherwise (a password set meanwhile stays):
	// the same password hashed again, not a change of password, so nothing
	// else of the user changes.
	ReplacePasswordHash(ctx context.Context, userID, oldHash, newHash string) error

	// Roles returns every role ordered by key; Role returns one (ENOTFOUND).
	Roles(ctx context.Context) ([]Role, error)
	Role(ctx context.Context, key string) (*Role, error)
	// PutRole creates or replaces a role. LAST_ADMIN when it takes the admin
	// mark off the role of the last active administrators.
	PutRole(ctx context.Context, r Role) error

	// AdminUsers returns every user ordered by email, each with whether its
	// email is locked at now and when it last signed in (its newest session).
	AdminUsers(ctx context.Context, now time.Time) ([]AdminUser, error)
	// AdminUser returns one user as AdminUsers does (ENOTFOUND).
	AdminUser(ctx context.Context, now time.Time, id string) (*AdminUser, error)
	// SetUserName changes a user's name (ENOTFOUND).
	SetUserName(ctx context.Context, userID, name string) error
	// ResendInvite, in one transaction: refuses with NOT_INVITED a user
	// that is not invited (ENOTFOUND for an unknown one), marks every unused
	// setup token of the user used (the earlier links stop working), inserts
	// t (filling t.ID) and queues m (filling m.ID).
	ResendInvite(ctx context.Context, t *OneTimeToken, m *Mail) error

	// EnsureDepartment returns the department named name, creating it when new.
	EnsureDepartment(ctx context.Context, name string) (*Department, error)
	// Departments returns every department ordered by name.
	Departments(ctx context.Context) ([]Department, error)
	// CreateDepartment inserts a department (ECONFLICT, field name, when
	// the name is taken).
	CreateDepartment(ctx context.Context, name string) (*Department, error)
	// RenameDepartment renames one (ENOTFOUND; ECONFLICT as above).
	RenameDepartment(ctx context.Context, id, name string) (*Department, error)
	// DeleteDepartment deletes one: ENOTFOUND, or IN_USE when a user or a
	// document (the trash's included) still names it, checked in the same
	// transaction as the delete.
	DeleteDepartment(ctx context.Context, id string) error

	// CreateProject inserts a project (ECONFLICT when the name is taken).
	CreateProject(ctx context.Context, name string) (*Project, error)
	// ProjectByName returns a project with its members (ENOTFOUND).
	ProjectByName(ctx context.Context, name string) (*Project, error)
	// Projects returns the projects memberID belongs to, or every project
	// when memberID is "", ordered by name then id, without their members.
	Projects(ctx context.Context, memberID string) ([]Project, error)
	// ProjectsWithMembers returns every project with its members, ordered
	// as Projects, from one snapshot.
	ProjectsWithMembers(ctx context.Context) ([]Project, error)
	// ProjectByID returns a project with its members (ENOTFOUND).
	ProjectByID(ctx context.Context, id string) (*Project, error)
	// RenameProject renames one (ENOTFOUND; ECONFLICT, field name).
	RenameProject(ctx context.Context, id, name string) (*Project, error)
	// DeleteProject deletes one and its memberships: ENOTFOUND, or IN_USE
	// when a document (the trash's included) is filed in it.
	DeleteProject(ctx context.Context, id string) error
	// RemoveProjectMember takes a user out of a project; removing one that
	// is not a member is no error. ENOTFOUND when the project does not exist.
	RemoveProjectMember(ctx context.Context, projectID, userID string) error
	// AddProjectMember adds a user to a project; adding twice is no error.
	AddProjectMember(ctx context.Context, projectID, userID string) error
	// IsProjectMember reports whether the user belongs to the project.
	// ENOTFOUND when the project does not exist.
	IsProjectMember(ctx context.Context, projectID, userID string) (bool, error)
}

// Settings keeps the few values a server shares with the admin commands run
// on its database.
type Settings interface {
	// SetSetting stores value under key, replacing an earlier value.
	SetSetting(ctx context.Context, key, value string) error
	// Setting returns the value under key; ENOTFOUND when there is none.
	Setting(ctx context.Context, key string) (string, error)
	// InitSetting stores value under key unless a value is there already,
	// and returns the value stored: of several nodes starting at once, all
	// get the value of the first.
	InitSetting(ctx context.Context, key, value string) (string, error)
}

// SettingPublicURL is the --public-url of the last quire serve started on
// the database: the base of the links in the mail an admin command queues
// (quire user invite) when it is not given one, so that the link is the one
// the server's users reach.
const SettingPublicURL = "public_url"

// SessionStore keeps signed-in sessions. Tokens are stored only as hashes.
type SessionStore interface {
	// CreateSession inserts s, filling s.ID.
	CreateSession(ctx context.Context, s *Session) error
	// SessionByTokenHash returns the session and its user (role and
	// department as they are now), without IP and UserAgent, which only
	// UserSessions reads. ENOTFOUND when no session has that hash.
	// It does not judge expiry or revocation: package auth does.
	SessionByTokenHash(ctx context.Context, hash []byte) (*Session, *User, error)
	// TouchSession sets the last-use time.
	TouchSession(ctx context.Context, sessionID string, at time.Time) error
	// RevokeSession revokes one session.
	RevokeSession(ctx context.Context, sessionID string, at time.Time) error
	// RevokeUserSessions revokes every session of the user but except
	// (which may be "").
	RevokeUserSessions(ctx context.Context, userID, except string, at time.Time) error
	// UserSessions lists the user's sessions neither revoked nor expired at
	// now, newest first (ties by id), token hashes left out. Idle ones are
	// listed: package auth judges the idle timeout.
	UserSessions(ctx context.Context, userID string, now time.Time) ([]Session, error)
	// RevokeUserSession revokes one session of the user. ENOTFOUND when no
	// session of that user, neither revoked nor expired at at, has that id.
	RevokeUserSession(ctx context.Context, userID, sessionID string, at time.Time) error
}

// APITokenStore keeps personal API tokens. Secrets are stored only as
// hashes. DisableUser and RedeemToken revoke a user's tokens in their
// transaction; SetPassword keeps them.
type APITokenStore interface {
	// CreateAPIToken inserts t, filling t.ID.
	CreateAPIToken(ctx context.Context, t *APIToken) error
	// APITokenByHash returns the token and its user (role and department
	// as they are now) in one indexed lookup, without IP and UserAgent.
	// ENOTFOUND when no token has that hash. It does not judge expiry or revocation: package auth does.
	APITokenByHash(ctx context.Context, hash []byte) (*APIToken, *User, error)
	// APITokens lists the user's tokens neither revoked nor expired at now,
	// newest first (ties by id), hashes left out.
	APITokens(ctx context.Context, userID string, now time.Time) ([]APIToken, error)
	// TouchAPIToken sets the last-use time, never moving it back.
	// ENOTFOUND for an unknown token.
	TouchAPIToken(ctx context.Context, tokenID string, at time.Time) error
	// RevokeAPIToken revokes one token of the user. ENOTFOUND when no token
	// of that user, neither revoked nor expired at at, has that id.
	RevokeAPIToken(ctx context.Context, userID, tokenID string, at time.Time) error
}

// LoginLimits are the limits of failed sign-ins (contract section 4).
type LoginLimits struct {
	Limit         int           // failed sign-ins per address and email...
	Window        time.Duration // ...in this sliding window
	LockThreshold int           // consecutive failures per email...
	LockDuration  time.Duration // ...lock it this long
}

// LoginGuard counts failed sign-ins per (client address, normalised email)
// in a sliding window, and consecutive failures per normalised email, whether
// or not an account exists.
type LoginGuard interface {
	// BeginLogin atomically checks the lock of email and the window of
	// (addr, email) and, when neither refuses, records one failure for the
	// pair in advance and returns its id, so that of many parallel attempts
	// no more than Limit get past. Returns ACCOUNT_LOCKED (checked first) or
	// TOO_MANY_ATTEMPTS, each with RetryAfter set, without recording anything.
	BeginLogin(ctx context.Context, addr, email string, now time.Time, l LoginLimits) (attemptID string, err error)
	// LoginFailed counts one consecutive failure for email and, when the
	// count reaches l.LockThreshold, locks the email until now+l.LockDuration
	// and, when locked is not nil, records it (auth.locked) in the same
	// transaction.
	LoginFailed(ctx context.Context, email string, now time.Time, l LoginLimits, locked *Event) error
	// LoginSucceeded withdraws the failure recorded by BeginLogin and resets
	// the consecutive count of email.
	LoginSucceeded(ctx context.Context, attemptID, email string) error
	// WithdrawLoginAttempt withdraws the failure recorded by BeginLogin
	// and leaves the consecutive count as it is: a correct password whose
	// sign-in waits for its second factor is not a failure, nor yet a
	// success.
	WithdrawLoginAttempt(ctx context.Context, attemptID string) error
	// ClearLoginFailures removes the lock, the consecutive count and every
	// windowed failure of email (unlock, password reset).
	ClearLoginFailures(ctx context.Context, email string) error
}

// TokenStore keeps one-time reset and setup tokens, and the log of
// forgot-password requests that limits them.
type TokenStore interface {
	// CreateToken inserts t (filling t.ID) and, in the same transaction,
	// queues m in the outbox (filling m.ID) when m is not nil.
	CreateToken(ctx context.Context, t *OneTimeToken, m *Mail) error
	// TokenByHash returns the token with that hash and purpose, used or not.
	// ENOTFOUND when there is none.
	TokenByHash(ctx context.Context, purpose TokenPurpose, hash []byte) (*OneTimeToken, error)
	// RedeemToken, in one transaction: refuses with INVALID_TOKEN a token
	// that is unknown, used, or expired at now, or whose user is not in the
	// state the purpose needs (reset: active; setup: invited); otherwise
	// marks it and every other unused token of the user used, stores
	// passwordHash and makes the user active, revokes every session of the
	// user, deletes its mfa tokens, and clears the login failures and lock of the user's email.
	// Returns the user as it is after the change.
	RedeemToken(ctx context.Context, purpose TokenPurpose, hash []byte, passwordHash string, now time.Time) (*User, error)
	// RequestReset serves a forgot-password request from the client address
	// addr for the normalised email, in one transaction that runs the same
	// statements whether or not the email has an account, so that neither
	// its answer nor its time tells them apart:
	//   - when addr made perAddr or more requests within window before now,
	//     it refuses with TOO_MANY_ATTEMPTS (RetryAfter set to when the
	//     oldest leaves the window) and records nothing;
	//   - otherwise it records the request and, when email belongs to an
	//     active user and fewer than perEmail earlier requests for email
	//     fall within window, inserts t for that user (filling t.ID and
	//     t.UserID) and queues m (filling m.ID).
	// It reports whether the token was created. Rows older than window are
	// pruned on the way.
	RequestReset(ctx context.Context, addr, email string, now time.Time, window time.Duration, perAddr, perEmail int,
		t *OneTimeToken, m *Mail) (created bool, err error)
	// BeginRedeem counts a reset-password or setup-password request from
	// the client address addr, in one transaction: when addr made perAddr
	// or more within window before now, it refuses with TOO_MANY_ATTEMPTS
	// (RetryAfter set to when the oldest leaves the window) and records
	// nothing; otherwise it records the request. Rows older than window
	// are pruned on the way.
	BeginRedeem(ctx context.Context, addr string, now time.Time, window time.Duration, perAddr int) error
}

// Outbox is the transactional mail outbox. Mails are delivered at least
// once: a worker that dies between the mail server's acceptance and
// MailSent leaves the mail to be sent again when its lease ends.
type Outbox interface {
	// QueueMail inserts m (filling m.ID) to be sent at once, whatever the
	// clock of the worker (m.NextTryAt is ignored).
	QueueMail(ctx context.Context, m *Mail) error
	// ClaimMail takes up to n mails due at now, in the order they fell due,
	// counts an attempt on each and hides them from other workers until
	// now+lease; several workers never claim the same mail. The mails are
	// returned with their bodies and their Attempts after this claim.
	ClaimMail(ctx context.Context, now time.Time, lease time.Duration, n int) ([]Mail, error)
	// MailSent marks a claimed mail sent and blanks its bodies, which carry
	// live links. ENOTFOUND for an unknown mail.
	MailSent(ctx context.Context, id string, at time.Time) error
	// MailFailed records a failed attempt and the time of the next one; a
	// zero next gives the mail up (never claimed again, bodies blanked).
	// ENOTFOUND for an unknown mail.
	MailFailed(ctx context.Context, id, reason string, next time.Time) error
	// MailByID returns one mail (ENOTFOUND). A mail given up has zero
	// SentAt and NextTryAt and a LastError; a queued one has zero Attempts.
	MailByID(ctx context.Context, id string) (*Mail, error)
}

// DocumentStore keeps documents and their versions. Every method applies the
// Visibility it is given in its queries: a document outside it is ENOTFOUND,
// and so is a document in the trash (TrashStore), which no method here
// reads, lists, counts, searches or changes.
type DocumentStore interface {
	// CreateDocument inserts d (filling ID when "", Version=1, CreatedAt=UpdatedAt=now,
	// OwnerName) and its version 1 in one transaction. An import that keeps
	// a document's dates sets d.CreatedAt (and d.UpdatedAt, not before it):
	// they are kept instead of now.
	CreateDocument(ctx context.Context, d *Document, now time.Time) error
	// Document returns one document, content included.
	Document(ctx context.Context, vis Visibility, id string) (*Document, error)
	// ListDocuments returns one page and the total number of matches.
	ListDocuments(ctx context.Context, f DocumentFilter) ([]Document, int, error)
	// UpdateDocument, holding the write lock: reads the document (ENOTFOUND),
	// refuses with DOCUMENT_CONFLICT (UpdatedAt and Document set) when guard
	// is not zero and differs from its updated_at at microsecond precision,
	// calls apply on a copy and, when apply reports a change, writes it with
	// Version+1, UpdatedAt strictly after the previous one (now, or one
	// microsecond later than the previous when now is not after it), and
	// records the new version created by byUserID. An error from apply is
	// returned as is and nothing is written.
	UpdateDocument(ctx context.Context, vis Visibility, id string, guard time.Time, byUserID string, now time.Time,
		apply func(d *Document) (changed bool, err error)) (*Document, error)
	// DeleteDocument moves a document to the trash, recording byUserID and
	// now as who and when; its fields, versions and tags are kept as they
	// are. ENOTFOUND when no document outside the trash has that id for vis.
	DeleteDocument(ctx context.Context, vis Visibility, id, byUserID string, now time.Time) error
	// Versions lists a document's versions, newest first, without content.
	Versions(ctx context.Context, vis Visibility, id string) ([]Version, error)
	// DocumentsAfter returns up to limit documents whose id sorts after
	// after ("" for the first), in id order, content included: an export
	// walks every document vis allows this way, one short query a page.
	DocumentsAfter(ctx context.Context, vis Visibility, after string, limit int) ([]Document, error)
	// Version returns one version with its content (ENOTFOUND).
	Version(ctx context.Context, vis Visibility, id string, number int) (*Version, error)
}

// TrashStore keeps the documents DeleteDocument moved to the trash. Each
// method sees only documents in the trash, through the same Visibility as
// DocumentStore's: a document outside it, or outside the trash, is ENOTFOUND.
type TrashStore interface {
	// Trash returns one page of the trash, newest deletion first (ties by
	// id, descending), without content, with DeletedAt, DeletedByID and
	// DeletedByName set, and the total number of documents vis sees there.
	Trash(ctx context.Context, f TrashFilter) ([]Document, int, error)
	// TrashedDocument returns one document of the trash, content included.
	TrashedDocument(ctx context.Context, vis Visibility, id string) (*Document, error)
	// RestoreDocument takes a document out of the trash exactly as it was
	// (same version, updated_at and versions; no version is recorded) and
	// returns it. Its folder is none when that folder was deleted meanwhile.
	RestoreDocument(ctx context.Context, vis Visibility, id string) (*Document, error)
	// PurgeDocument deletes a document of the trash for good, with its
	// versions and tags. A document outside the trash is never purged.
	PurgeDocument(ctx context.Context, vis Visibility, id string) error
	// PurgeTrash deletes for good up to limit documents moved to the trash
	// before before, oldest first, with their versions and tags, and
	// returns how many. One caller at a time purges a database: a call
	// that finds another one purging (another node) returns 0 at once.
	// When record is not nil, the event it makes of each document purged
	// (document.purged) is written in the same transaction.
	PurgeTrash(ctx context.Context, before time.Time, limit int, record func(id, title string) *Event) (int, error)
}

// FolderStore keeps folders. Folders are seen by everyone with view.
type FolderStore interface {
	Folders(ctx context.Context) ([]Folder, error)
	// Folder returns one folder (ENOTFOUND).
	Folder(ctx context.Context, id string) (*Folder, error)
	// CreateFolder inserts f (filling ID when "", and times).
	CreateFolder(ctx context.Context, f *Folder, now time.Time) error
	// UpdateFolder writes name and parent. It refuses with EVALIDATION
	// (field parent_id) a parent that is the folder or one of its
	// descendants, checked in the same transaction as the write.
	UpdateFolder(ctx context.Context, f *Folder, now time.Time) error
	// DeleteFolder deletes an empty folder; FOLDER_NOT_EMPTY when it holds
	// documents (outside the trash) or folders; ENOTFOUND when there is
	// none. Documents of the trash in it are left in no folder.
	DeleteFolder(ctx context.Context, id string) error
}

// IdempotencyStore keeps the answers to requests sent with an idempotency
// key (package idempotency), one record per user and key. A record is
// running (claimed by a request until its lease ends) or done (its answer
// kept until KeepUntil). The answer of a request that changed something is
// written by the change's own transaction (Keeping), so the change and its
// record are committed together or not at all. A store
// served by one process (SQLite) may keep running claims in memory, since
// a crash that forgets them also ends the requests that held them.
type IdempotencyStore interface {
	// ClaimIdempotencyKey looks up (c.UserID, c.Key) at now and, in one
	// atomic step:
	//   - with no record, or one done before now or running past its lease,
	//     records c as running until now+lease and returns nil, nil: the
	//     caller runs the request;
	//   - with a record of another fingerprint, returns
	//     IDEMPOTENCY_KEY_REUSED;
	//   - with a done record, returns its answer;
	//   - with a running one, returns IDEMPOTENCY_IN_PROGRESS with
	//     RetryAfter set to the rest of its lease.
	ClaimIdempotencyKey(ctx context.Context, c IdempotencyClaim, now time.Time, lease time.Duration) (*IdempotentAnswer, error)
	// CompleteIdempotencyKey keeps a as the answer of the running claim c
	// until c.KeepUntil. When c no longer holds the record (the change's
	// transaction completed it already, or its lease ended and another
	// request took it over) it does nothing and returns nil.
	CompleteIdempotencyKey(ctx context.Context, c IdempotencyClaim, a IdempotentAnswer) error
	// ReleaseIdempotencyKey deletes the record while c holds it running, so
	// that a retry runs afresh; a done record stays.
	ReleaseIdempotencyKey(ctx context.Context, c IdempotencyClaim) error
	// PruneIdempotencyKeys deletes up to limit records that ended before
	// now (done past KeepUntil, running past the lease, where the store
	// keeps running claims as records) and returns how many it deleted. Of
	// several nodes on one database, one prunes at a time: the others
	// return 0 at once.
	PruneIdempotencyKeys(ctx context.Context, now time.Time, limit int) (int, error)
	// Keeping returns the store whose write of a document, a folder or an
	// attachment (create, update, restore, delete, purge) keeps k's answer,
	// rendered from the change's result, in the change's own transaction,
	// or refuses the change with IDEMPOTENCY_IN_PROGRESS when k's claim is
	// no longer held. It records the events of this store, as Recording
	// keeps k. A nil k: the store as it is.
	Keeping(k *Keep) Store
}

// LinkStore reads the links between documents that CreateDocument and
// UpdateDocument record from the content they save (quire.LinkedDocuments,
// with the SettingPublicURL the store holds); a purge deletes the links of
// the document purged.
type LinkStore interface {
	// Backlinks returns one page of the documents outside the trash that
	// f.Visibility sees and whose content links to f.TargetID, without
	// content, most recently updated first (ties by id, descending), and
	// how many there are. It does not check the target itself.
	Backlinks(ctx context.Context, f BacklinkFilter) ([]Document, int, error)
}
