package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
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
	return s.auth.Authenticate(r.Context(), c.Value)
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

// clientAddr is the client's address by the contract's rule, the same as
// the API's: the TCP peer, or, when the peer is a trusted proxy, the
// right-most address of X-Forwarded-For that is not a trusted proxy.
// Sign-in limits are counted per this address.
func (s *server) clientAddr(r *http.Request) string {
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	if !s.trusted(peer) {
		return peer.String()
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		for _, part := range strings.Split(h, ",") {
			hops = append(hops, strings.TrimSpace(part))
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			// An unreadable hop ends what can be believed: the last trusted
			// proxy vouches only for what it appended.
			break
		}
		a = a.Unmap()
		if !s.trusted(a) {
			return a.String()
		}
	}
	return peer.String()
}

func (s *server) trusted(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
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
