package web

import (
	"errors"
	"net/http"

	"quire"
	"quire/passkey"
)

// passkeySection is the Passkeys part of the Account page: the reader's
// passkeys, each with a rename and a remove form, and the button that
// registers another (static/passkey.js drives navigator.credentials
// through the API's /api/auth/passkeys endpoints). Without a passkey
// service, or with a public URL that cannot be a relying party, the
// section says so instead.
type passkeySection struct {
	PasskeysShown  bool
	PasskeyReason  string // why passkeys are unavailable here ("" when they are)
	Passkeys       []quire.Passkey
	PasskeyEditID  string // the passkey whose rename was refused
	PasskeyEditErr string
}

// passkeysOn reports whether the sign-in page offers a passkey.
func (s *server) passkeysOn() bool {
	return s.cfg.Passkeys != nil && s.cfg.Passkeys.Available() == nil
}

func (s *server) passkeySection(r *http.Request, actor quire.Actor) (passkeySection, error) {
	pk := s.cfg.Passkeys
	if pk == nil {
		return passkeySection{}, nil
	}
	sec := passkeySection{PasskeysShown: true}
	if err := pk.Available(); err != nil {
		sec.PasskeyReason = quire.ErrorMessage(err)
	}
	var err error
	sec.Passkeys, err = pk.List(r.Context(), actor)
	return sec, err
}

func handlePasskeyRename(s *server, pk *passkey.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		id := r.PathValue("id")
		_, err := pk.Rename(r.Context(), actor, id, r.PostForm.Get("name"))
		if errorCode(err) != quire.EVALIDATION {
			if err != nil {
				return err
			}
			http.Redirect(w, r, "/account?m=passkey-renamed#passkeys-heading", http.StatusSeeOther)
			return nil
		}
		return s.accountRefused(w, r, actor, "The passkey was not renamed.", func(p *accountPage) {
			p.PasskeyEditID = id
			var e *quire.Error
			if errors.As(err, &e) {
				p.PasskeyEditErr = "The name " + e.Fields["name"] + "."
			}
		})
	}
}

func handlePasskeyRemove(pk *passkey.Service) actorFunc {
	return handleByID(pk.Remove, to("/account?m=passkey-removed#passkeys-heading"))
}

// The Activity page offers the passkey events among its filters.
func init() {
	activityPrefixes = append(activityPrefixes, "passkey.")
	activityActions = append(activityActions,
		quire.ActionPasskeyRegistered, quire.ActionPasskeyRenamed, quire.ActionPasskeyRemoved)
}
