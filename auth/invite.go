package auth

import (
	"context"
	"time"

	"quire"
	"quire/mail"
)

// Invite creates u (already validated) as an invited user without a
// password, and queues the setup mail with a link valid for InviteTTL,
// which it returns: <PublicURL>/setup-password?token=T. The token and the
// mail are committed together; a running server's outbox worker sends the
// mail, whichever process queued it. An email that is still invited gets a
// new invitation; earlier links stay valid until one of them is used.
func (s *Service) Invite(ctx context.Context, u *quire.User) (string, error) {
	return s.invite(ctx, u, cliEvent)
}

// cliEvent makes the events of the CLI's acts; actorEvent those of an
// administrator through the API or the web.
func cliEvent(action string, at time.Time) *quire.Event { return quire.CLIEvent(action, at) }

func actorEvent(a quire.Actor) func(action string, at time.Time) *quire.Event {
	return func(action string, at time.Time) *quire.Event {
		return quire.NewEvent(action, at, quire.EventActorOf(a), a.Request)
	}
}

// invite is Invite, its event made by event.
func (s *Service) invite(ctx context.Context, u *quire.User, event func(string, time.Time) *quire.Event) (string, error) {
	now := s.now()
	ttl := s.inviteTTL()
	token := newToken()
	link := s.link("setup-password", token)
	// Rendered before the user is created, so that a template failure
	// leaves no invited user without an invitation.
	m, err := mail.Render(mail.SetupPassword, u.Email, mail.Data{Name: u.Name, Email: u.Email, Link: link, ValidFor: ttl})
	if err != nil {
		return "", err
	}
	m.CreatedAt = now
	u.Status, u.PasswordHash = quire.UserInvited, ""
	if err := s.store.CreateUser(ctx, u); err != nil {
		// Inviting an email that is still invited sends a new invitation:
		// the way to resend a lost mail, and to finish an invitation whose
		// process stopped between creating the user and queuing its mail.
		existing, lerr := s.store.UserByEmail(ctx, u.Email)
		if quire.ErrorCode(err) != quire.ECONFLICT || lerr != nil || existing.Status != quire.UserInvited {
			return "", err
		}
		*u = *existing
	}
	t := &quire.OneTimeToken{
		UserID:    u.ID,
		Purpose:   quire.PurposeSetup,
		TokenHash: hashToken(token),
		CreatedAt: now,
		ExpiresAt: now.Add(ttl),
	}
	// Recorded with the invitation (the token and its mail), which an email
	// still invited gets again; never the link.
	ev := event(quire.ActionUserInvited, now).On(quire.TargetUser, u.ID, u.Name).
		With("email", u.Email).With("role", u.Role.Key)
	if err := s.recording(ev).CreateToken(ctx, t, m); err != nil {
		return "", err
	}
	s.logger.Info("user invited", "user", u.ID)
	return link, nil
}
