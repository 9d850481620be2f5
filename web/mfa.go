package web

import (
	"errors"
	"net/http"
	"strings"

	"quire"
	"quire/auth"
	"quire/mfa"
)

// The second factor in the web application (product.md section 11): the
// second step of signing in, the set-up on the Account page with its QR
// code (a PNG served here: no script builds it), the recovery codes shown
// once, switching it off with the password, an administrator's reset, and
// a role's requireMfa leading its users to the set-up.

func init() {
	for k, v := range map[string]string{
		"mfa-required":  "Your role requires a second factor. Set one up below before you go on.",
		"mfa-off":       "Second factor switched off. You sign in with your password alone.",
		"mfa-reset":     "Second factor reset: the user signs in with the password alone until they set up a new one.",
		"mfa-restarted": "A new secret was made: add it to your authenticator app and confirm it with a code.",
	} {
		flashes[k] = v
	}
}

// mfaRoutes registers the pages of the second factor.
func (s *server) mfaRoutes() {
	m, a := s.mux, s.auth
	m.Handle("POST /login/mfa", s.public(handleLoginMFA(s, a)))
	m.Handle("POST /account/mfa/totp", s.signedIn(handleTOTPBegin(a.MFA())))
	m.Handle("GET /account/mfa/totp.png", s.signedIn(handleTOTPImage(a.MFA())))
	m.Handle("POST /account/mfa/totp/confirm", s.signedIn(handleTOTPConfirm(s, a.MFA())))
	m.Handle("POST /account/mfa/totp/disable", s.signedIn(handleTOTPDisable(s, a)))
	m.Handle("POST /admin/users/{id}/reset-mfa", s.admin(adminAct(s, "user", "User", func(r *http.Request, actor quire.Actor) (string, error) {
		id := r.PathValue("id")
		return "/admin/users/" + id + "?m=mfa-reset", a.MFA().Reset(r.Context(), actor, id)
	})))
}

// mfaSetupPages are the pages a user whose role requires a second factor
// may open before it has one; every other page of signedIn sends it to
// the set-up on the Account page. Signing out is a public page.
var mfaSetupPages = map[string]bool{
	"GET /account":                   true,
	"POST /account/mfa/totp":         true,
	"GET /account/mfa/totp.png":      true,
	"POST /account/mfa/totp/confirm": true,
}

// mfaGate reports whether r may go on for actor: false after it sent the
// browser to the set-up.
func (s *server) mfaGate(w http.ResponseWriter, r *http.Request, actor quire.Actor) (bool, error) {
	if mfaSetupPages[r.Pattern] || actor.User.MustChangePassword {
		return true, nil
	}
	err := s.auth.MFA().SetupRequired(r.Context(), actor)
	switch errorCode(err) {
	case "":
		return true, nil
	case quire.EMFASETUPREQUIRED:
		http.Redirect(w, r, "/account?m=mfa-required#mfa", http.StatusSeeOther)
		return false, nil
	}
	return false, err
}

// mfaLoginPage is the second step of signing in: a code for the mfaToken
// of the password step, carried in the form (never in a URL).
type mfaLoginPage struct {
	layout
	MFAToken string
	Next     string
	Retry    string
}

func (s *server) renderMFALogin(w http.ResponseWriter, r *http.Request, status int, p mfaLoginPage) {
	s.views.render(w, r, status, "login_mfa.html", p, s.logger)
}

func handleLoginMFA(s *server, a *auth.Service) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := parseForm(r); err != nil {
			return err
		}
		token, code := r.PostForm.Get("mfaToken"), strings.TrimSpace(r.PostForm.Get("code"))
		next := safeNext(r.PostForm.Get("next"))
		p := mfaLoginPage{layout: s.layout(r, nil, "Sign in: second step"), MFAToken: token, Next: next}
		if code == "" {
			p.Fields["code"] = "Enter the code your authenticator app shows, or a recovery code."
			p.Error = "Enter a code."
			s.renderMFALogin(w, r, http.StatusBadRequest, p)
			return nil
		}
		sess, err := a.LoginMFA(r.Context(), s.request(r), token, code)
		if err != nil {
			code := errorCode(err)
			status, ok := statusOf(code)
			if !ok || status >= 500 {
				return err
			}
			if code == quire.EINVALIDMFATOKEN {
				// Start again from the password.
				lp := loginPage{layout: s.layout(r, nil, "Sign in"), Next: next}
				lp.Error = quire.ErrorMessage(err)
				return s.show(w, r, status, "login.html", lp)
			}
			p.Error = quire.ErrorMessage(err)
			if code == quire.EINVALIDMFACODE {
				p.Fields["code"] = "This code is not right, or was used already."
			}
			p.Retry = retryText(err)
			setRetryAfter(w, err)
			s.renderMFALogin(w, r, status, p)
			return nil
		}
		s.setSession(w, r, sess)
		http.Redirect(w, r, orDefault(next, homeOf(quire.Actor{User: *sess.User})), http.StatusSeeOther)
		return nil
	}
}

func handleTOTPBegin(m *mfa.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if _, err := m.Begin(r.Context(), actor); err != nil {
			return err
		}
		http.Redirect(w, r, "/account?m=mfa-restarted#mfa", http.StatusSeeOther)
		return nil
	}
}

// handleTOTPImage serves the QR code of the set-up that waits, as a PNG
// (no-store, like every signed-in page: it carries the secret).
func handleTOTPImage(m *mfa.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		png, err := m.QRCode(r.Context(), actor)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(png)
		return nil
	}
}

// recoveryPage shows the recovery codes of a confirmation, this once: it
// is answered to the POST itself and nothing keeps them.
type recoveryPage struct {
	layout
	Codes []string
}

func handleTOTPConfirm(s *server, m *mfa.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		code := r.PostForm.Get("code")
		var (
			codes []string
			err   error
		)
		if strings.TrimSpace(code) == "" {
			err = quire.Invalid(map[string]string{"code": "is required"})
		} else {
			codes, err = m.Confirm(r.Context(), actor, code)
		}
		switch errorCode(err) {
		case "":
			p := recoveryPage{layout: s.section(r, &actor, "account", "Second factor on"), Codes: codes}
			return s.show(w, r, http.StatusOK, "mfa_recovery.html", p)
		case quire.EVALIDATION:
		default:
			return err
		}
		return s.accountRefused(w, r, actor, "The second factor was not switched on.", func(p *accountPage) {
			p.Fields["code"] = "The code " + fieldReason(err, "code") + "."
		})
	}
}

func handleTOTPDisable(s *server, a *auth.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		password := r.PostForm.Get("password")
		var err error
		if password == "" {
			err = quire.Invalid(map[string]string{"password": "is required"})
		} else {
			err = a.DisableTOTP(r.Context(), actor, password)
		}
		code := errorCode(err)
		if code == "" {
			http.Redirect(w, r, "/account?m=mfa-off", http.StatusSeeOther)
			return nil
		}
		status, ok := statusOf(code)
		if !ok || status >= 500 || code == quire.EMFASETUPREQUIRED {
			return err
		}
		p, perr := s.accountPage(r, actor)
		if perr != nil {
			return perr
		}
		p.Fields["mfa-password"] = "Enter your current password."
		if code == quire.EINVALIDCURRENT {
			p.Fields["mfa-password"] = "This is not your current password."
		}
		p.Error = "The second factor is still on. " + quire.ErrorMessage(err)
		if rt := retryText(err); rt != "" {
			p.Error += " " + rt
		}
		setRetryAfter(w, err)
		return s.show(w, r, status, "account.html", p)
	}
}

// fieldReason is what err says of one field ("is required").
func fieldReason(err error, field string) string {
	var e *quire.Error
	if errors.As(err, &e) && e.Fields[field] != "" {
		return e.Fields[field]
	}
	return "is not right"
}
