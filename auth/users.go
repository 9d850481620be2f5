package auth

import (
	"context"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"quire"
)

// NewUser is what an administrator gives to create a user.
type NewUser struct {
	Email      string
	Name       string
	Role       string
	Department string // a department name, created when new; "" for none
	Password   string // "" creates the user invited, as Invite does
	// MustChangePassword makes the user choose its own password at its
	// first sign-in in the web application (the first administrator).
	MustChangePassword bool
}

// CreateUser creates a user. With a password the user is active at once;
// without one the user is invited: the setup mail is queued and its link
// returned.
func (s *Service) CreateUser(ctx context.Context, nu NewUser) (u *quire.User, link string, err error) {
	u, err = s.newUser(ctx, nu)
	if err != nil {
		return nil, "", err
	}
	if nu.Password == "" {
		link, err := s.Invite(ctx, u)
		if err != nil {
			return nil, "", err
		}
		return u, link, nil
	}
	if err := s.CheckPassword(u.Email, nu.Password); err != nil {
		return nil, "", err
	}
	if u.PasswordHash, err = s.hash(ctx, nu.Password); err != nil {
		return nil, "", err
	}
	u.Status, u.MustChangePassword = quire.UserActive, nu.MustChangePassword
	u.ID = newID()
	ev := quire.CLIEvent(quire.ActionUserCreated, s.now()).On(quire.TargetUser, u.ID, u.Name).
		With("email", u.Email).With("role", u.Role.Key)
	if err := s.recording(ev).CreateUser(ctx, u); err != nil {
		return nil, "", err
	}
	return u, "", nil
}

// newUser validates nu and returns the user to insert, invited and without
// a password; its department is created when new.
func (s *Service) newUser(ctx context.Context, nu NewUser) (*quire.User, error) {
	email := quire.NormalizeEmail(nu.Email)
	name := strings.TrimSpace(nu.Name)
	fields := map[string]string{}
	if !validEmail(email) {
		fields["email"] = "must be an email address"
	}
	if name == "" || utf8.RuneCountInString(name) > 200 {
		fields["name"] = "must be 1 to 200 characters"
	}
	role, err := s.store.Role(ctx, nu.Role)
	switch {
	case quire.ErrorCode(err) == quire.ENOTFOUND:
		fields["role"] = "is not a known role"
	case err != nil:
		return nil, err
	}
	if len(fields) > 0 {
		return nil, quire.Invalid(fields)
	}
	u := &quire.User{Email: email, Name: name, Role: *role, Status: quire.UserInvited}
	if dept := strings.TrimSpace(nu.Department); dept != "" {
		// Blanked by the store when the department exists already.
		ev := quire.CLIEvent(quire.ActionDepartmentCreated, s.now()).On(quire.TargetDepartment, "", dept)
		d, err := s.recording(ev).EnsureDepartment(ctx, dept)
		if err != nil {
			return nil, err
		}
		u.DepartmentID, u.DepartmentName = d.ID, d.Name
	}
	return u, nil
}

// maxEmail is the longest address an account has (RFC 5321's path, less
// its brackets); overlongEmail stands for any longer one a sign-in gives.
const (
	maxEmail      = 254
	overlongEmail = "(an address longer than 254 bytes)"
)

func validEmail(email string) bool {
	if len(email) > maxEmail || strings.ContainsAny(email, " <>\"") {
		return false
	}
	a, err := mail.ParseAddress(email)
	return err == nil && a.Address == email && strings.Contains(email, "@")
}

// SetRole gives the user with email a role; it applies from the next request.
func (s *Service) SetRole(ctx context.Context, email, role string) error {
	u, err := s.store.UserByEmail(ctx, quire.NormalizeEmail(email))
	if err != nil {
		return err
	}
	ev := quire.CLIEvent(quire.ActionUserUpdated, s.now()).On(quire.TargetUser, u.ID, u.Name).
		With("role", map[string]string{"from": u.Role.Key, "to": role})
	return s.recording(ev).SetUserRole(ctx, u.ID, role)
}

// Disable disables the user with email and revokes all its sessions.
func (s *Service) Disable(ctx context.Context, email string) error {
	u, err := s.store.UserByEmail(ctx, quire.NormalizeEmail(email))
	if err != nil {
		return err
	}
	now := s.now()
	ev := quire.CLIEvent(quire.ActionUserDisabled, now).On(quire.TargetUser, u.ID, u.Name)
	return s.recording(ev).DisableUser(ctx, u.ID, now)
}

// Unlock clears the lock and the failure counters of email, whether or not
// an account has it.
func (s *Service) Unlock(ctx context.Context, email string) error {
	email = quire.NormalizeEmail(email)
	ev := quire.CLIEvent(quire.ActionUserUnlocked, s.now()).With("email", email)
	u, err := s.store.UserByEmail(ctx, email)
	switch {
	case err == nil:
		ev.On(quire.TargetUser, u.ID, u.Name)
	case quire.ErrorCode(err) != quire.ENOTFOUND:
		return err
	}
	return s.recording(ev).ClearLoginFailures(ctx, email)
}

// Enable lets the disabled user with email sign in again; one disabled
// before it chose a password is invited again. Sessions revoked when it was
// disabled stay revoked. A user that is not disabled is left as it is.
func (s *Service) Enable(ctx context.Context, email string) error {
	u, err := s.store.UserByEmail(ctx, quire.NormalizeEmail(email))
	if err != nil {
		return err
	}
	now := s.now()
	ev := quire.CLIEvent(quire.ActionUserEnabled, now).On(quire.TargetUser, u.ID, u.Name)
	return s.recording(ev).EnableUser(ctx, u.ID, now)
}

// RoleChange names what to change in a role; a nil field is left as it is.
type RoleChange struct {
	Label      *string
	Docs       *quire.Level
	Admin      *bool
	RequireMFA *bool
}

// UpdateRole changes in the role key only what c names, or creates the
// role, which then needs a label and a level (it sees all documents only
// when c.Admin says so). It returns the role as stored. EVALIDATION for a
// key that is not one word of at most 64 characters, an empty label or one
// over 100 characters, or a missing label or level of a new role;
// LAST_ADMIN when it would take the admin mark off the role of the last
// active administrators.
func (s *Service) UpdateRole(ctx context.Context, key string, c RoleChange) (*quire.Role, error) {
	return s.updateRole(ctx, key, c, cliEvent)
}

// updateRole is UpdateRole, its event made by event.
func (s *Service) updateRole(ctx context.Context, key string, c RoleChange, event func(string, time.Time) *quire.Event) (*quire.Role, error) {
	fields := map[string]string{}
	if key == "" || len(key) > 64 || strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		fields["key"] = "must be one word of 1 to 64 characters"
	}
	if c.Label != nil {
		l := strings.TrimSpace(*c.Label)
		c.Label = &l
		if l == "" || utf8.RuneCountInString(l) > 100 {
			fields["label"] = "must be 1 to 100 characters"
		}
	}
	if c.Docs != nil && (*c.Docs < quire.LevelNone || *c.Docs > quire.LevelWrite) {
		fields["docs"] = "must be none, view or write"
	}
	if len(fields) > 0 {
		return nil, quire.Invalid(fields)
	}
	r, err := s.store.Role(ctx, key)
	switch {
	case quire.ErrorCode(err) == quire.ENOTFOUND:
		if c.Label == nil {
			fields["label"] = "is required for a new role"
		}
		if c.Docs == nil {
			fields["docs"] = "is required for a new role"
		}
		if len(fields) > 0 {
			return nil, quire.Invalid(fields)
		}
		r = &quire.Role{Key: key}
	case err != nil:
		return nil, err
	}
	if c.Label != nil {
		r.Label = *c.Label
	}
	if c.Docs != nil {
		r.Docs = *c.Docs
	}
	if c.Admin != nil {
		r.Admin = *c.Admin
	}
	if c.RequireMFA != nil {
		r.RequireMFA = *c.RequireMFA
	}
	ev := event(quire.ActionRoleUpdated, s.now()).On(quire.TargetRole, r.Key, r.Label).
		With("docs", r.Docs.String()).With("admin", r.Admin).With("requireMfa", r.RequireMFA)
	if err := s.recording(ev).PutRole(ctx, *r); err != nil {
		return nil, err
	}
	return r, nil
}

// newID is the id of a user the service creates, known before the write so
// that its event names it.
func newID() string { return uuid.Must(uuid.NewV7()).String() }
