package auth

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"quire"
	"quire/mail"
)

// The administration of product.md section 9, as the API and the web
// application drive it: every method takes the actor and refuses anyone
// who is not an administrator with FORBIDDEN. The guards (LAST_ADMIN,
// IN_USE, NOT_INVITED) are the store's, checked in the change's own
// transaction, the same the CLI's methods meet.

// RequireAdmin returns FORBIDDEN unless the actor's role is an admin role.
func RequireAdmin(a quire.Actor) error {
	if !a.User.Role.Admin {
		return quire.Errorf(quire.EFORBIDDEN, "Only an administrator may do this")
	}
	return nil
}

// AdminUser returns one user as AdminUsers shows it (ENOTFOUND).
func (s *Service) AdminUser(ctx context.Context, a quire.Actor, id string) (*quire.AdminUser, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	return s.store.AdminUser(ctx, s.now(), id)
}

// AdminUsers lists every user with its lock and last sign-in.
func (s *Service) AdminUsers(ctx context.Context, a quire.Actor) ([]quire.AdminUser, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	return s.store.AdminUsers(ctx, s.now())
}

// Invitation is what an administrator gives to invite a person.
type Invitation struct {
	Email        string
	Name         string
	Role         string
	DepartmentID string // "" for none
}

// InviteUser creates an invited user and queues the setup mail, as quire
// user invite does. Unlike the CLI it refuses an email that any user has,
// invited or not (VALIDATION_ERROR, field email): resending is its own act.
func (s *Service) InviteUser(ctx context.Context, a quire.Actor, in Invitation) (*quire.User, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	u, err := s.newUser(ctx, NewUser{Email: in.Email, Name: in.Name, Role: in.Role})
	if err != nil {
		return nil, err
	}
	if err := s.checkDepartment(ctx, in.DepartmentID); err != nil {
		return nil, err
	}
	u.DepartmentID = in.DepartmentID
	switch _, err := s.store.UserByEmail(ctx, u.Email); {
	case err == nil:
		return nil, quire.Invalid(map[string]string{"email": "is already taken"})
	case quire.ErrorCode(err) != quire.ENOTFOUND:
		return nil, err
	}
	if _, err := s.invite(ctx, u, actorEvent(a)); err != nil {
		return nil, err
	}
	return s.store.UserByID(ctx, u.ID)
}

// checkDepartment returns VALIDATION_ERROR (field departmentId) when id is
// set and names no department.
func (s *Service) checkDepartment(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	ds, err := s.store.Departments(ctx)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if d.ID == id {
			return nil
		}
	}
	return quire.Invalid(map[string]string{"departmentId": "is not a known department"})
}

// UserChange names what to change in a user; a nil field is left as it is.
// DepartmentID points to "" to clear the department.
type UserChange struct {
	Name         *string
	Role         *string
	DepartmentID *string
	Disabled     *bool
}

// UpdateUser changes what c names and returns the user as it is then.
// Everything is validated first; the changes the last-administrator guard
// may refuse (role, disabled) are made before the others, so a refusal
// leaves the user as it was. Disabling revokes every session at once.
func (s *Service) UpdateUser(ctx context.Context, a quire.Actor, id string, c UserChange) (*quire.User, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	before, err := s.store.UserByID(ctx, id)
	if err != nil {
		return nil, err
	}
	event := func(action string) *quire.Event {
		return actorEvent(a)(action, s.now()).On(quire.TargetUser, before.ID, before.Name)
	}
	fields := map[string]string{}
	if c.Name != nil {
		n := strings.TrimSpace(*c.Name)
		c.Name = &n
		if n == "" || utf8.RuneCountInString(n) > 200 {
			fields["name"] = "must be 1 to 200 characters"
		}
	}
	if c.Role != nil {
		switch _, err := s.store.Role(ctx, *c.Role); {
		case quire.ErrorCode(err) == quire.ENOTFOUND:
			fields["role"] = "is not a known role"
		case err != nil:
			return nil, err
		}
	}
	if c.DepartmentID != nil {
		if err := s.checkDepartment(ctx, *c.DepartmentID); quire.ErrorCode(err) == quire.EVALIDATION {
			fields["departmentId"] = "is not a known department"
		} else if err != nil {
			return nil, err
		}
	}
	if len(fields) > 0 {
		return nil, quire.Invalid(fields)
	}
	if c.Role != nil && *c.Role != before.Role.Key {
		ev := event(quire.ActionUserUpdated).With("role", map[string]string{"from": before.Role.Key, "to": *c.Role})
		if err := s.recording(ev).SetUserRole(ctx, id, *c.Role); err != nil {
			return nil, err
		}
	}
	if c.Disabled != nil && *c.Disabled != (before.Status == quire.UserDisabled) {
		now := s.now()
		if *c.Disabled {
			err = s.recording(event(quire.ActionUserDisabled)).DisableUser(ctx, id, now)
		} else {
			err = s.recording(event(quire.ActionUserEnabled)).EnableUser(ctx, id, now)
		}
		if err != nil {
			return nil, err
		}
	}
	if c.Name != nil && *c.Name != before.Name {
		ev := event(quire.ActionUserUpdated).With("name", map[string]string{"from": before.Name, "to": *c.Name})
		if err := s.recording(ev).SetUserName(ctx, id, *c.Name); err != nil {
			return nil, err
		}
	}
	if c.DepartmentID != nil && *c.DepartmentID != before.DepartmentID {
		ev := event(quire.ActionUserUpdated).With("departmentId", map[string]string{"from": before.DepartmentID, "to": *c.DepartmentID})
		if err := s.recording(ev).SetUserDepartment(ctx, id, *c.DepartmentID); err != nil {
			return nil, err
		}
	}
	return s.store.UserByID(ctx, id)
}

// UnlockUser clears the lock and the failure counters of the user's email.
func (s *Service) UnlockUser(ctx context.Context, a quire.Actor, id string) error {
	if err := RequireAdmin(a); err != nil {
		return err
	}
	u, err := s.store.UserByID(ctx, id)
	if err != nil {
		return err
	}
	ev := actorEvent(a)(quire.ActionUserUnlocked, s.now()).On(quire.TargetUser, u.ID, u.Name).With("email", u.Email)
	return s.recording(ev).ClearLoginFailures(ctx, u.Email)
}

// ResendInvite sends an invited user a new setup link and voids the
// earlier ones. NOT_INVITED for a user who is active or disabled.
func (s *Service) ResendInvite(ctx context.Context, a quire.Actor, id string) error {
	if err := RequireAdmin(a); err != nil {
		return err
	}
	u, err := s.store.UserByID(ctx, id)
	if err != nil {
		return err
	}
	if u.Status != quire.UserInvited {
		return quire.Errorf(quire.ENOTINVITED, "The user is not invited")
	}
	now, ttl, token := s.now(), s.inviteTTL(), newToken()
	link := s.link("setup-password", token)
	m, err := mail.Render(mail.SetupPassword, u.Email, mail.Data{Name: u.Name, Email: u.Email, Link: link, ValidFor: ttl})
	if err != nil {
		return err
	}
	m.CreatedAt = now
	t := &quire.OneTimeToken{UserID: u.ID, Purpose: quire.PurposeSetup, TokenHash: hashToken(token),
		CreatedAt: now, ExpiresAt: now.Add(ttl)}
	ev := actorEvent(a)(quire.ActionUserInvited, now).On(quire.TargetUser, u.ID, u.Name).
		With("email", u.Email).With("role", u.Role.Key).With("again", true)
	if err := s.recording(ev).ResendInvite(ctx, t, m); err != nil {
		return err
	}
	s.logger.Info("invitation sent again", "user", u.ID)
	return nil
}

// cleanName trims name and checks it is 1 to 100 characters.
func cleanName(name string) (string, error) {
	n := strings.TrimSpace(name)
	if n == "" || utf8.RuneCountInString(n) > 100 {
		return "", quire.Invalid(map[string]string{"name": "must be 1 to 100 characters"})
	}
	return n, nil
}

// conflictAsInvalid answers a name already taken as the API does: a
// VALIDATION_ERROR naming the field.
func conflictAsInvalid(err error) error {
	var e *quire.Error
	if errors.As(err, &e) && e.Code == quire.ECONFLICT && len(e.Fields) > 0 {
		return quire.Invalid(e.Fields)
	}
	return err
}

// nameByAdmin is the creation or renaming of a department or project:
// it checks that a is an admin and that name is a valid name, then calls
// write with the name cleaned, on the store that records the event action
// on the target typ (id: "" for one being created). A name taken is
// VALIDATION_ERROR.
func nameByAdmin[T any](s *Service, a quire.Actor, name, action, typ, id string, write func(r Recorded, n string) (*T, error)) (*T, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	n, err := cleanName(name)
	if err != nil {
		return nil, err
	}
	ev := actorEvent(a)(action, s.now()).On(typ, id, n)
	v, err := write(s.recording(ev), n)
	return v, conflictAsInvalid(err)
}

// Departments lists every department.
func (s *Service) Departments(ctx context.Context, a quire.Actor) ([]quire.Department, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	return s.store.Departments(ctx)
}

// CreateDepartment creates a department; a name taken is VALIDATION_ERROR.
func (s *Service) CreateDepartment(ctx context.Context, a quire.Actor, name string) (*quire.Department, error) {
	return nameByAdmin(s, a, name, quire.ActionDepartmentCreated, quire.TargetDepartment, "", func(r Recorded, n string) (*quire.Department, error) {
		return r.CreateDepartment(ctx, n)
	})
}

// RenameDepartment renames a department.
func (s *Service) RenameDepartment(ctx context.Context, a quire.Actor, id, name string) (*quire.Department, error) {
	return nameByAdmin(s, a, name, quire.ActionDepartmentUpdated, quire.TargetDepartment, id, func(r Recorded, n string) (*quire.Department, error) {
		return r.RenameDepartment(ctx, id, n)
	})
}

// DeleteDepartment deletes a department no user or document uses (IN_USE).
func (s *Service) DeleteDepartment(ctx context.Context, a quire.Actor, id string) error {
	if err := RequireAdmin(a); err != nil {
		return err
	}
	ev := actorEvent(a)(quire.ActionDepartmentDeleted, s.now()).On(quire.TargetDepartment, id, s.departmentName(ctx, id))
	return s.recording(ev).DeleteDepartment(ctx, id)
}

// Projects lists every project with its members.
func (s *Service) Projects(ctx context.Context, a quire.Actor) ([]quire.Project, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	return s.store.ProjectsWithMembers(ctx)
}

// CreateProject creates a project; a name taken is VALIDATION_ERROR.
func (s *Service) CreateProject(ctx context.Context, a quire.Actor, name string) (*quire.Project, error) {
	return nameByAdmin(s, a, name, quire.ActionProjectCreated, quire.TargetProject, "", func(r Recorded, n string) (*quire.Project, error) {
		return r.CreateProject(ctx, n)
	})
}

// RenameProject renames a project.
func (s *Service) RenameProject(ctx context.Context, a quire.Actor, id, name string) (*quire.Project, error) {
	return nameByAdmin(s, a, name, quire.ActionProjectUpdated, quire.TargetProject, id, func(r Recorded, n string) (*quire.Project, error) {
		return r.RenameProject(ctx, id, n)
	})
}

// DeleteProject deletes a project no document is filed in (IN_USE).
func (s *Service) DeleteProject(ctx context.Context, a quire.Actor, id string) error {
	if err := RequireAdmin(a); err != nil {
		return err
	}
	p, err := s.store.ProjectByID(ctx, id)
	if err != nil {
		return err
	}
	ev := actorEvent(a)(quire.ActionProjectDeleted, s.now()).On(quire.TargetProject, id, p.Name)
	return s.recording(ev).DeleteProject(ctx, id)
}

// AddProjectMember adds a user to a project; it applies from the next
// request, which reads membership afresh.
func (s *Service) AddProjectMember(ctx context.Context, a quire.Actor, projectID, userID string) error {
	if err := RequireAdmin(a); err != nil {
		return err
	}
	p, u, err := s.projectAndUser(ctx, projectID, userID)
	if err != nil {
		return err
	}
	ev := actorEvent(a)(quire.ActionProjectMemberAdded, s.now()).On(quire.TargetProject, p.ID, p.Name).
		With("userId", u.ID).With("userName", u.Name)
	return s.recording(ev).AddProjectMember(ctx, projectID, userID)
}

// RemoveProjectMember takes a user out of a project (ENOTFOUND for an
// unknown project or user).
func (s *Service) RemoveProjectMember(ctx context.Context, a quire.Actor, projectID, userID string) error {
	if err := RequireAdmin(a); err != nil {
		return err
	}
	p, u, err := s.projectAndUser(ctx, projectID, userID)
	if err != nil {
		return err
	}
	ev := actorEvent(a)(quire.ActionProjectMemberRemoved, s.now()).On(quire.TargetProject, p.ID, p.Name).
		With("userId", u.ID).With("userName", u.Name)
	return s.recording(ev).RemoveProjectMember(ctx, projectID, userID)
}

// Roles lists every role.
func (s *Service) Roles(ctx context.Context, a quire.Actor) ([]quire.Role, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	return s.store.Roles(ctx)
}

// PutRole creates or replaces the role key with every field given, through
// UpdateRole (LAST_ADMIN when it takes the admin mark off the role of the
// last active administrators).
func (s *Service) PutRole(ctx context.Context, a quire.Actor, key string, label string, docs quire.Level, admin, requireMFA bool) (*quire.Role, error) {
	if err := RequireAdmin(a); err != nil {
		return nil, err
	}
	return s.updateRole(ctx, key, RoleChange{Label: &label, Docs: &docs, Admin: &admin, RequireMFA: &requireMFA}, actorEvent(a))
}

// projectAndUser reads both, for the event of a membership change
// (ENOTFOUND for either).
func (s *Service) projectAndUser(ctx context.Context, projectID, userID string) (*quire.Project, *quire.User, error) {
	p, err := s.store.ProjectByID(ctx, projectID)
	if err != nil {
		return nil, nil, err
	}
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return nil, nil, err
	}
	return p, u, nil
}

// departmentName is the name of the department id, "" when there is none
// (the delete then answers ENOTFOUND and records nothing).
func (s *Service) departmentName(ctx context.Context, id string) string {
	ds, err := s.store.Departments(ctx)
	if err != nil {
		return ""
	}
	for _, d := range ds {
		if d.ID == id {
			return d.Name
		}
	}
	return ""
}
