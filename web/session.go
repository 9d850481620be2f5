package web

import (
	"net/http"
	"time"

	"quire"
	"quire/auth"
)

// cookieName is the API's session cookie: one sign-in serves both.
const cookieName = "auth_token"

var errSignedOut = quire.Errorf(quire.EUNAUTHORIZED, "Authentication required")

// actor returns who is signed in, from the session cookie alone. Pages never
// read an Authorization header: a browser sends none, and the cookie's
// SameSite=Lax together with the cross-origin check guards every POST.
func (s *server) actor(r *http.Request) (quire.Actor, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return quire.Actor{}, errSignedOut
	}
	a, err := s.auth.Authenticate(r.Context(), c.Value)
	a.Request = s.request(r)
	return a, err
}

// request is where r came from, for the audit log: the client address, and
// the request id that the API's front (httpapi's ServeHTTP) set on r.
func (s *server) request(r *http.Request) quire.RequestInfo {
	return quire.RequestInfo{IP: s.clientAddr(r), RequestID: r.Header.Get("X-Request-Id")}
}

// setSession sets the session cookie exactly as the API's sign-in does.
func (s *server) setSession(w http.ResponseWriter, r *http.Request, sess *auth.Session) {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    sess.Token,
		Path:     "/",
		MaxAge:   int(s.auth.Config().TokenTTL / time.Second),
		HttpOnly: true,
		Secure:   s.cfg.SecureCookies || r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}

// clearSession removes the session cookie (when the browser sent one).
func (s *server) clearSession(w http.ResponseWriter, r *http.Request) {
	if _, err := r.Cookie(cookieName); err != nil {
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.cfg.SecureCookies || r.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
}

// clientAddr is the client's address by the contract's rule, the API's own.
func (s *server) clientAddr(r *http.Request) string {
	return auth.ClientAddr(r, s.cfg.TrustedProxies)
}

// safeNext returns next when it is a path on this site to return to after
// signing in, and "" otherwise: never another host ("//evil", "/\evil"),
// never a scheme, never a control character.
func safeNext(next string) string {
	if next == "" || len(next) > 2000 || next[0] != '/' {
		return ""
	}
	if len(next) > 1 && (next[1] == '/' || next[1] == '\\') {
		return ""
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return ""
		}
	}
	return next
}
