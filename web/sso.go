package web

import (
	"net/http"
	"net/url"

	"quire"
	"quire/sso"
)

// Single sign-on pages (product.md section 12): the button of the sign-in
// page leads to /auth/oidc/start, which sends the browser to the identity
// provider; the provider sends it back to /auth/oidc/callback, which opens
// an ordinary session (the auth_token cookie) or shows why it may not.

// ssoCookie keeps the state of a sign-in in the browser that began it, so
// that a callback brought by another browser (a link someone was sent) is
// refused. It lives as long as a flow and is read only under /auth/oidc.
const ssoCookie = "quire_sso_state"

// ssoLogin is what the sign-in page shows of single sign-on.
type ssoLogin struct {
	Name string // the button's label after "Sign in with"; "" without SSO
	// PasswordHidden hides the password form (--oidc-only) unless the page
	// was opened with ?password=1, the administrators' way in.
	PasswordHidden bool
}

func (s *server) ssoLogin(r *http.Request) ssoLogin {
	if s.cfg.SSO == nil {
		return ssoLogin{}
	}
	return ssoLogin{Name: s.cfg.SSO.Name(), PasswordHidden: s.cfg.SSO.Only() && r.URL.Query().Get("password") != "1"}
}

func (s *server) ssoRoutes() {
	if s.cfg.SSO == nil {
		return
	}
	s.mux.Handle("GET "+sso.StartPath, s.public(handleSSOStart(s, s.cfg.SSO)))
	s.mux.Handle("GET "+sso.CallbackPath, s.public(handleSSOCallback(s, s.cfg.SSO)))
}

// handleSSOStart begins a sign-in at the provider and sends the browser
// there, remembering in a cookie which sign-in it began.
func handleSSOStart(s *server, svc *sso.Service) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		next := safeNext(r.URL.Query().Get("next"))
		state, authURL, err := svc.Begin(r.Context(), s.request(r).IP, next)
		if err != nil {
			return err
		}
		http.SetCookie(w, &http.Cookie{
			Name: ssoCookie, Value: state, Path: "/auth/oidc", MaxAge: 600,
			HttpOnly: true, Secure: s.cfg.SecureCookies || r.TLS != nil, SameSite: http.SameSiteLaxMode,
		})
		http.Redirect(w, r, authURL, http.StatusSeeOther)
		return nil
	}
}

// ssoRefusedPage says why a sign-in through the provider was refused.
type ssoRefusedPage struct {
	layout
	Message string
	Name    string
}

// handleSSOCallback finishes a sign-in. The state cookie goes whatever
// the outcome: a flow is taken once.
func handleSSOCallback(s *server, svc *sso.Service) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		cb := sso.Callback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error")}
		if c, err := r.Cookie(ssoCookie); err == nil {
			cb.CookieState = c.Value
		}
		http.SetCookie(w, &http.Cookie{
			Name: ssoCookie, Value: "", Path: "/auth/oidc", MaxAge: -1,
			HttpOnly: true, Secure: s.cfg.SecureCookies || r.TLS != nil, SameSite: http.SameSiteLaxMode,
		})
		res, err := svc.Finish(r.Context(), s.request(r), cb)
		if err != nil {
			code := errorCode(err)
			status, ok := statusOf(code)
			if !ok || status >= 500 {
				return err
			}
			p := ssoRefusedPage{layout: s.layout(r, nil, "Sign-in refused"), Message: quire.ErrorMessage(err), Name: svc.Name()}
			return s.show(w, r, status, "sso-refused.html", p)
		}
		s.setSession(w, r, res.Session)
		http.Redirect(w, r, orDefault(res.Next, homeOf(quire.Actor{User: *res.Session.User})), http.StatusSeeOther)
		return nil
	}
}

// ssoStartURL is the button's link, coming back to next.
func ssoStartURL(next string) string {
	if next == "" {
		return sso.StartPath
	}
	return sso.StartPath + "?" + url.Values{"next": {next}}.Encode()
}
