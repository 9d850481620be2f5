package httpapi

import (
	"net/http"

	"quire"
	"quire/auth"
	"quire/mfa"
)

// The second factor (product.md section 11): the TOTP set-up, the second
// step of a sign-in, switching it off, an administrator's reset, and the
// rule of a role's requireMfa.

// mfaSetupRoutes are the routes a user whose role requires a second factor
// may call before it has one: setting one up, me and logout. Every other
// authenticated route answers 403 MFA_SETUP_REQUIRED until then.
var mfaSetupRoutes = map[string]bool{
	"GET /api/auth/me":                true,
	"POST /api/auth/logout":           true,
	"POST /api/auth/mfa/totp":         true,
	"POST /api/auth/mfa/totp/confirm": true,
	// A passkey counts as a second factor too (passkeys.go).
	"GET /api/auth/passkeys":                  true,
	"POST /api/auth/passkeys/register/begin":  true,
	"POST /api/auth/passkeys/register/finish": true,
}

// mfaGate refuses the actor's request with MFA_SETUP_REQUIRED while its
// role requires a second factor it has not set up, except on
// mfaSetupRoutes. The same session goes on once it has one.
func (s *Server) mfaGate(r *http.Request, actor quire.Actor) error {
	if mfaSetupRoutes[r.Pattern] {
		return nil
	}
	return s.auth.MFA().SetupRequired(r.Context(), actor)
}

// writeMFARequired answers a correct password that needs a second step:
// no session yet, so no token and no cookie.
func writeMFARequired(w http.ResponseWriter, sess *auth.Session) error {
	return writeJSON(w, http.StatusOK, map[string]any{
		"message":     "Second factor required",
		"mfaRequired": true,
		"mfaToken":    sess.MFAToken,
	})
}

func handleLoginMFA(a *auth.Service, secure bool, checkOrigin func(*http.Request) error) apiFunc {
	type request struct {
		MFAToken *string `json:"mfaToken"`
		Code     *string `json:"code"`
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeSameOrigin[request](w, r, checkOrigin)
		if err != nil {
			return err
		}
		if err := required(map[string]*string{"mfaToken": req.MFAToken, "code": req.Code}); err != nil {
			return err
		}
		sess, err := a.LoginMFA(r.Context(), requestInfo(r), *req.MFAToken, *req.Code)
		if err != nil {
			return err
		}
		return writeSignedIn(w, r, a, sess, secure)
	}
}

func handleTOTPBegin(m *mfa.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		// Nothing needs sending; a body a client sends anyway ({} is
		// common) must be a JSON object, whose fields are ignored.
		if _, _, err := decodeOptional[struct{}](w, r); err != nil {
			return err
		}
		e, err := m.Begin(r.Context(), actor)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{"secret": e.Secret, "otpauthUrl": e.URL})
	}
}

func handleTOTPConfirm(m *mfa.Service) authedFunc {
	type request struct {
		Code *string `json:"code"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		req, err := decode[request](w, r)
		if err != nil {
			return err
		}
		if err := required(map[string]*string{"code": req.Code}); err != nil {
			return err
		}
		codes, err := m.Confirm(r.Context(), actor, *req.Code)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string][]string{"recoveryCodes": codes})
	}
}

func handleTOTPDisable(a *auth.Service) authedFunc {
	type request struct {
		Password *string `json:"password"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		req, err := decode[request](w, r)
		if err != nil {
			return err
		}
		if err := required(map[string]*string{"password": req.Password}); err != nil {
			return err
		}
		if err := a.DisableTOTP(r.Context(), actor, *req.Password); err != nil {
			return err
		}
		return writeMessage(w, "Second factor switched off")
	}
}

func handleAdminUserMFAReset(m *mfa.Service) authedFunc {
	return handleByID(m.Reset, "Second factor reset")
}
