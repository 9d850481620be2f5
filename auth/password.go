package auth

import (
	"context"
	"strings"
	"time"

	"quire"
	"quire/mail"
)

// Limits of forgot-password, so that it cannot flood an inbox: per client
// address, forgotPerAddr requests in forgotWindow, then TOO_MANY_ATTEMPTS;
// per email, at most forgotPerEmail mails in forgotWindow, further requests
// answered the same but mailing nothing. Both are counted whether or not
// the email has an account.
const (
	forgotWindow   = time.Hour
	forgotPerAddr  = 10
	forgotPerEmail = 3
)

// Limit of reset-password and setup-password together, so that one client
// cannot try tokens or passwords without end: per client address,
// redeemPerAddr requests in redeemWindow (the defaults of the sign-in limit),
// then TOO_MANY_ATTEMPTS. Every request with a token counts, whatever its
// outcome: a rejected token and a weak password as much as a success.
const (
	redeemWindow  = 15 * time.Minute
	redeemPerAddr = 20
)

// forgotFloor is the least time a forgot-password request takes. Both kinds
// of request run the same statements, but an account's request writes two
// more rows (the token and the mail), about a tenth of a millisecond on
// SQLite; answering no sooner than this floor, far above the work itself,
// hides that difference.
const forgotFloor = 25 * time.Millisecond

var (
	errInvalidToken   = quire.InvalidToken()
	errInvalidCurrent = quire.Errorf(quire.EINVALIDCURRENT, "Current password is incorrect")
)

// link is the address of a page of the web application with a token,
// always built from the configured public URL, never from a request.
func (s *Service) link(page, token string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/" + page + "?token=" + token
}

func (s *Service) resetTTL() time.Duration {
	if s.cfg.ResetTTL > 0 {
		return s.cfg.ResetTTL
	}
	return time.Hour
}

func (s *Service) inviteTTL() time.Duration {
	if s.cfg.InviteTTL > 0 {
		return s.cfg.InviteTTL
	}
	return 168 * time.Hour
}

// ForgotPassword queues a reset link for email when it belongs to an
// active account; invited accounts get nothing (their way in is the setup
// link), nor do disabled ones. Its answer is nil whether or not a mail is
// queued, and it does the same work either way: the token and the mail are
// made for every request, one store call decides inside its transaction
// whether to keep them, and the answer comes no sooner than forgotFloor.
// TOO_MANY_ATTEMPTS when addr has asked too often.
func (s *Service) ForgotPassword(ctx context.Context, req quire.RequestInfo, email string) error {
	email = quire.NormalizeEmail(email)
	switch {
	case email == "":
		return quire.Invalid(map[string]string{"email": "is required"})
	case !validEmail(email):
		return quire.Invalid(map[string]string{"email": "must be an email address"})
	}
	// The wall clock, not s.now: the floor is about real time even when
	// the service runs on a test clock.
	defer waitUntil(ctx, time.Now().Add(forgotFloor))
	now := s.now()
	ttl := s.resetTTL()
	token := newToken()
	m, err := mail.Render(mail.ResetPassword, email, mail.Data{Email: email, Link: s.link("reset-password", token), ValidFor: ttl})
	if err != nil {
		return err
	}
	m.CreatedAt = now
	t := &quire.OneTimeToken{Purpose: quire.PurposeReset, TokenHash: hashToken(token), CreatedAt: now, ExpiresAt: now.Add(ttl)}
	// Recorded with every request let past the limit, whether or not the
	// email has an account (the store cannot tell without a difference
	// of work): the email tried is in the details, the target is none.
	ev := quire.NewEvent(quire.ActionPasswordResetRequested, now, nil, req).With("email", email)
	_, err = s.recording(ev).RequestReset(ctx, req.IP, email, now, forgotWindow, forgotPerAddr, forgotPerEmail, t, m)
	return err
}

// waitUntil returns at t, or sooner when ctx is done.
func waitUntil(ctx context.Context, t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// ResetPassword sets a new password with a token from ForgotPassword,
// asked for from the client address addr. It revokes every session of the
// user and clears the lock and failure counters of its email. When addr has
// made too many reset and setup requests it is TOO_MANY_ATTEMPTS, before
// anything else is checked. A token that is unknown, used or expired, or
// whose account is no longer active (disabled since, or never set up), is
// INVALID_TOKEN whatever the password; with a valid token a weak password
// is WEAK_PASSWORD and the token stays usable.
func (s *Service) ResetPassword(ctx context.Context, req quire.RequestInfo, token, password string) error {
	u, err := s.redeem(ctx, req, quire.PurposeReset, quire.UserActive, token, password)
	if err != nil {
		return err
	}
	s.logger.Info("password reset", "user", u.ID)
	return nil
}

// SetupPassword accepts an invitation: it sets the first password of an
// invited user, who becomes active. Errors as for ResetPassword, whose
// limit per address it shares.
func (s *Service) SetupPassword(ctx context.Context, req quire.RequestInfo, token, password string) error {
	u, err := s.redeem(ctx, req, quire.PurposeSetup, quire.UserInvited, token, password)
	if err != nil {
		return err
	}
	s.logger.Info("invitation accepted", "user", u.ID)
	return nil
}

// redeem checks the token before the password, so that a bad token is
// INVALID_TOKEN whatever the password and a weak password leaves a good
// token unused. The store checks the token again in the transaction that
// uses it, so of two requests with one token only one succeeds.
func (s *Service) redeem(ctx context.Context, req quire.RequestInfo, purpose quire.TokenPurpose, status quire.UserStatus, token, password string) (*quire.User, error) {
	now := s.now()
	if err := s.store.BeginRedeem(ctx, req.IP, now, redeemWindow, redeemPerAddr); err != nil {
		return nil, err
	}
	u, err := s.usableToken(ctx, purpose, status, token, now)
	if err != nil {
		return nil, err
	}
	if err := s.CheckPassword(u.Email, password); err != nil {
		return nil, err
	}
	encoded, err := s.hash(ctx, password)
	if err != nil {
		return nil, err
	}
	action := quire.ActionPasswordReset
	if purpose == quire.PurposeSetup {
		action = quire.ActionPasswordSetup
	}
	ev := quire.NewEvent(action, now, &quire.EventActor{ID: u.ID, Name: u.Name}, req).On(quire.TargetUser, u.ID, u.Name)
	return s.recording(ev).RedeemToken(ctx, purpose, hashToken(token), encoded, now)
}

// checkCurrentPassword checks the actor's password as a sign-in of its
// email from addr at now: limits and locks apply (TOO_MANY_ATTEMPTS,
// ACCOUNT_LOCKED), and a wrong one is INVALID_CURRENT_PASSWORD counted as a
// failed sign-in. It returns the actor's user as stored.
func (s *Service) checkCurrentPassword(ctx context.Context, actor quire.Actor, addr, password string, now time.Time) (*quire.User, error) {
	email := actor.User.Email
	attempt, err := s.store.BeginLogin(ctx, addr, email, now, s.cfg.Limits)
	if err != nil {
		return nil, err
	}
	u, err := s.store.UserByID(ctx, actor.User.ID)
	if err != nil {
		return nil, err
	}
	ok, err := s.verify(ctx, u.PasswordHash, password)
	switch {
	case err == nil:
	case ctx.Err() != nil || quire.ErrorCode(err) != quire.EINTERNAL:
		return nil, err // the request is gone, or no hashing slot came free
	default:
		s.logger.Error("stored password hash is unreadable", "user", u.ID, "err", err)
		ok = false
	}
	if !ok {
		if err := s.loginFailed(ctx, actor.Request, email, u, now); err != nil {
			return nil, err
		}
		return nil, errInvalidCurrent
	}
	return u, s.store.LoginSucceeded(ctx, attempt, email)
}

// ChangePassword changes the signed-in actor's password. The current
// password is checked as a sign-in of the actor's email from addr would be:
// limits and locks apply (TOO_MANY_ATTEMPTS, ACCOUNT_LOCKED), and a wrong
// one is INVALID_CURRENT_PASSWORD counted as a failed sign-in. Then the new
// one must pass the policy (WEAK_PASSWORD). Every other session of the user
// is revoked; the actor's own stays, and so do the user's API tokens. An
// actor with an API token is FORBIDDEN.
func (s *Service) ChangePassword(ctx context.Context, actor quire.Actor, addr, current, next string) error {
	if err := RequireSession(actor); err != nil {
		return err
	}
	email, now := actor.User.Email, s.now()
	u, err := s.checkCurrentPassword(ctx, actor, addr, current, now)
	if err != nil {
		return err
	}
	if err := s.CheckPassword(email, next); err != nil {
		return err
	}
	encoded, err := s.hash(ctx, next)
	if err != nil {
		return err
	}
	// Revoke first: should the process stop between the two writes, the
	// other sessions are gone and the old password still holds, which is
	// the safe half to have done.
	if err := s.store.RevokeUserSessions(ctx, u.ID, actor.SessionID, now); err != nil {
		return err
	}
	ev := quire.NewEvent(quire.ActionPasswordChanged, now, quire.EventActorOf(actor), actor.Request).
		On(quire.TargetUser, u.ID, u.Name)
	if err := s.recording(ev).SetPassword(ctx, u.ID, encoded, now); err != nil {
		return err
	}
	s.logger.Info("password changed", "user", u.ID)
	return nil
}
