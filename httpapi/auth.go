package httpapi

import (
	"net/http"
	"time"

	"quire"
	"quire/auth"
	"quire/internal/userjson"
)

const cookieName = "auth_token"

// userJSON is USER of contract section 4 (internal/userjson, shared with
// the command line's --json records).
type userJSON = userjson.User

var newUserJSON = userjson.Of

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func handleLogin(a *auth.Service, secure bool, checkOrigin func(*http.Request) error) apiFunc {
	type request struct {
		Email    *string `json:"email"`
		Password *string `json:"password"`
		Timezone *string `json:"timezone"`
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeSameOrigin[request](w, r, checkOrigin)
		if err != nil {
			return err
		}
		if err := required(map[string]*string{"email": req.Email, "password": req.Password}); err != nil {
			return err
		}
		tz := ""
		if req.Timezone != nil {
			tz = *req.Timezone
		}
		sess, err := a.Login(r.Context(), requestInfo(r), *req.Email, *req.Password, tz)
		if err != nil {
			return err
		}
		if sess.MFAToken != "" {
			return writeMFARequired(w, sess) // mfa.go
		}
		return writeSignedIn(w, r, a, sess, secure)
	}
}

// writeSignedIn answers a completed sign-in: the session cookie and the
// token with the user.
func writeSignedIn(w http.ResponseWriter, r *http.Request, a *auth.Service, sess *auth.Session, secure bool) error {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    sess.Token,
		Path:     "/",
		MaxAge:   int(a.Config().TokenTTL / time.Second),
		HttpOnly: true,
		Secure:   secure || r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
	return writeJSON(w, http.StatusOK, map[string]any{
		"message":     "Login successful",
		"accessToken": sess.Token,
		"user":        newUserJSON(sess.User),
	})
}

func handleMe() authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		return writeJSON(w, http.StatusOK, map[string]any{"user": newUserJSON(&actor.User)})
	}
}

func handleLogout(a *auth.Service, secure bool) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := a.Logout(r.Context(), actor); err != nil {
			return err
		}
		http.SetCookie(w, &http.Cookie{
			Name: cookieName, Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, Secure: secure || r.TLS != nil, SameSite: http.SameSiteLaxMode,
		})
		return writeJSON(w, http.StatusOK, map[string]string{"message": "Logged out"})
	}
}
