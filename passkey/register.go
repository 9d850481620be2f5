package passkey

import (
	"context"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"quire"
	"quire/auth"
)

// List returns the actor's passkeys, oldest first. A session is needed:
// an API token manages no credentials.
func (s *Service) List(ctx context.Context, actor quire.Actor) ([]quire.Passkey, error) {
	if err := auth.RequireSession(actor); err != nil {
		return nil, err
	}
	return s.store.Passkeys(ctx, actor.User.ID)
}

// BeginRegistration starts registering a passkey for the actor: the
// options to pass to navigator.credentials.create. The authenticator is
// asked for a discoverable credential (so that it can sign in alone) and,
// preferably, to verify the user; the actor's passkeys are excluded, so
// that one authenticator is not registered twice.
func (s *Service) BeginRegistration(ctx context.Context, actor quire.Actor) (*protocol.CredentialCreation, error) {
	if err := auth.RequireSession(actor); err != nil {
		return nil, err
	}
	if err := s.Available(); err != nil {
		return nil, err
	}
	have, err := s.store.Passkeys(ctx, actor.User.ID)
	if err != nil {
		return nil, err
	}
	if len(have) >= MaxPerUser {
		return nil, quire.Invalid(map[string]string{"passkeys": "at most 20 per user: remove one first"})
	}
	creds := make(webauthn.Credentials, len(have))
	for i := range have {
		creds[i] = credential(&have[i])
	}
	creation, sd, err := s.wa.BeginRegistration(webauthnUser{user: &actor.User, creds: creds},
		webauthn.WithExclusions(creds.CredentialDescriptors()),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired))
	if err != nil {
		return nil, err
	}
	if err := s.begin(ctx, quire.PasskeyRegister, actor.User.ID, actor.Request.IP, sd); err != nil {
		return nil, err
	}
	return creation, nil
}

// FinishRegistration checks the authenticator's answer (the JSON of the
// PublicKeyCredential that navigator.credentials.create resolved to)
// against the actor's pending registration, and keeps the passkey under
// name (DefaultName when blank), recording passkey.registered. An answer
// to no pending registration of the actor (unknown, used, expired, or
// another user's) or one that does not verify is VALIDATION_ERROR naming
// credential.
func (s *Service) FinishRegistration(ctx context.Context, actor quire.Actor, name string, response []byte) (*quire.Passkey, error) {
	if err := auth.RequireSession(actor); err != nil {
		return nil, err
	}
	if err := s.Available(); err != nil {
		return nil, err
	}
	name, err := checkName(name, true)
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return nil, parseError(err)
	}
	sd, c, ok, err := s.take(ctx, quire.PasskeyRegister, parsed.Response.CollectedClientData.Challenge)
	if err != nil {
		return nil, err
	}
	if !ok || c.UserID != actor.User.ID {
		return nil, quire.Invalid(map[string]string{"credential": "answers no registration begun here (it expired or was used): begin again"})
	}
	cred, err := s.wa.CreateCredential(webauthnUser{user: &actor.User}, sd, parsed)
	if err != nil {
		s.logger.Debug("passkey registration refused", "user", actor.User.ID, "err", err)
		return nil, quire.Invalid(map[string]string{"credential": "was not accepted: begin again"})
	}
	n, err := s.store.Passkeys(ctx, actor.User.ID)
	if err != nil {
		return nil, err
	}
	if len(n) >= MaxPerUser {
		return nil, quire.Invalid(map[string]string{"passkeys": "at most 20 per user: remove one first"})
	}
	transports := make([]string, 0, len(cred.Transport))
	for _, t := range cred.Transport {
		if t != "" && len(transports) < 8 {
			transports = append(transports, string(t))
		}
	}
	now := s.now()
	p := &quire.Passkey{
		UserID: actor.User.ID, CredentialID: cred.ID, Name: name, PublicKey: cred.PublicKey,
		SignCount: cred.Authenticator.SignCount, Transports: transports, AAGUID: cred.Authenticator.AAGUID,
		Flags: byte(cred.Flags.ProtocolValue()), CreatedAt: now,
	}
	ev := quire.NewEvent(quire.ActionPasskeyRegistered, now, quire.EventActorOf(actor), actor.Request).
		On(quire.TargetPasskey, "", name)
	if err := s.recording(ev).CreatePasskey(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// Rename renames one of the actor's passkeys (ENOTFOUND for another's),
// recording passkey.renamed; the same name again changes nothing.
func (s *Service) Rename(ctx context.Context, actor quire.Actor, id, name string) (*quire.Passkey, error) {
	if err := auth.RequireSession(actor); err != nil {
		return nil, err
	}
	name, err := checkName(name, false)
	if err != nil {
		return nil, err
	}
	p, err := s.own(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	if p.Name == name {
		return p, nil
	}
	ev := quire.NewEvent(quire.ActionPasskeyRenamed, s.now(), quire.EventActorOf(actor), actor.Request).
		On(quire.TargetPasskey, p.ID, name).With("from", p.Name)
	if err := s.recording(ev).RenamePasskey(ctx, actor.User.ID, id, name); err != nil {
		return nil, err
	}
	p.Name = name
	return p, nil
}

// Remove deletes one of the actor's passkeys (ENOTFOUND for another's),
// recording passkey.removed. Sessions it opened go on: they are ordinary
// sessions, revoked as any other.
func (s *Service) Remove(ctx context.Context, actor quire.Actor, id string) error {
	if err := auth.RequireSession(actor); err != nil {
		return err
	}
	p, err := s.own(ctx, actor, id)
	if err != nil {
		return err
	}
	ev := quire.NewEvent(quire.ActionPasskeyRemoved, s.now(), quire.EventActorOf(actor), actor.Request).
		On(quire.TargetPasskey, p.ID, p.Name)
	return s.recording(ev).DeletePasskey(ctx, actor.User.ID, id)
}

// own returns the actor's passkey id (ENOTFOUND).
func (s *Service) own(ctx context.Context, actor quire.Actor, id string) (*quire.Passkey, error) {
	ps, err := s.store.Passkeys(ctx, actor.User.ID)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		if ps[i].ID == id {
			return &ps[i], nil
		}
	}
	return nil, quire.Errorf(quire.ENOTFOUND, "Passkey not found")
}

// HasPasskey reports whether the user has a passkey: a second factor for
// a role that requires one.
func (s *Service) HasPasskey(ctx context.Context, userID string) (bool, error) {
	return s.store.HasPasskey(ctx, userID)
}
