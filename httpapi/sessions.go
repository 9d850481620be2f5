package httpapi

import (
	"net/http"
	"time"

	"quire"
	"quire/auth"
)

// sessionJSON is one signed-in session of the caller (product.md section 10).
type sessionJSON struct {
	ID         string `json:"id"`
	CreatedAt  string `json:"createdAt"`
	LastUsedAt string `json:"lastUsedAt"`
	IP         string `json:"ip"`
	UserAgent  string `json:"userAgent"`
	Current    bool   `json:"current"`
}

func handleSessionList(a *auth.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		list, err := a.Sessions(r.Context(), actor)
		if err != nil {
			return err
		}
		out := convertAll(list, func(s *quire.Session) sessionJSON {
			return sessionJSON{
				ID:         s.ID,
				CreatedAt:  formatTime(s.CreatedAt),
				LastUsedAt: formatTime(s.LastUsedAt),
				IP:         s.IP,
				UserAgent:  s.UserAgent,
				Current:    s.ID == actor.SessionID,
			}
		})
		return writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
	}
}

// handleSessionDelete revokes one of the caller's sessions. Revoking the
// session of the request itself is a sign-out: its cookie is cleared too.
func handleSessionDelete(a *auth.Service, secure bool) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		id := r.PathValue("id")
		if err := a.RevokeSession(r.Context(), actor, id); err != nil {
			return err
		}
		if id == actor.SessionID {
			if _, err := r.Cookie(cookieName); err == nil {
				http.SetCookie(w, &http.Cookie{
					Name: cookieName, Value: "", Path: "/", MaxAge: -1,
					HttpOnly: true, Secure: secure || r.TLS != nil, SameSite: http.SameSiteLaxMode,
				})
			}
		}
		return writeJSON(w, http.StatusOK, map[string]string{"message": "Session revoked"})
	}
}

func handleSessionDeleteOthers(a *auth.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := a.RevokeOtherSessions(r.Context(), actor); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{"message": "Other sessions revoked"})
	}
}

// apiTokenJSON is a personal API token as listed: never its secret.
// lastUsedAt is null until the token is first used.
type apiTokenJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Scope      string  `json:"scope"`
	CreatedAt  string  `json:"createdAt"`
	ExpiresAt  string  `json:"expiresAt"`
	LastUsedAt *string `json:"lastUsedAt"`
}

func newAPITokenJSON(t *quire.APIToken) apiTokenJSON {
	out := apiTokenJSON{
		ID:        t.ID,
		Name:      t.Name,
		Scope:     string(t.Scope),
		CreatedAt: formatTime(t.CreatedAt),
		ExpiresAt: formatTime(t.ExpiresAt),
	}
	if !t.LastUsedAt.IsZero() {
		s := formatTime(t.LastUsedAt)
		out.LastUsedAt = &s
	}
	return out
}

func handleTokenCreate(a *auth.Service) authedFunc {
	type request struct {
		Name      *string `json:"name"`
		Scope     *string `json:"scope"`
		ExpiresAt *string `json:"expiresAt"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		// Refused before the body is read: a token never learns more
		// than that it cannot do this.
		if err := auth.RequireSession(actor); err != nil {
			return err
		}
		req, err := decode[request](w, r)
		if err != nil {
			return err
		}
		var name, scope string
		if req.Name != nil {
			name = *req.Name
		}
		if req.Scope != nil {
			scope = *req.Scope
		}
		var expires *time.Time
		if req.ExpiresAt != nil {
			t, err := time.Parse(time.RFC3339Nano, *req.ExpiresAt)
			if err != nil {
				return quire.Invalid(map[string]string{"expiresAt": "must be an RFC 3339 date-time"})
			}
			expires = &t
		}
		t, secret, err := a.CreateAPIToken(r.Context(), actor, name, scope, expires)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, map[string]any{"token": newAPITokenJSON(t), "secret": secret})
	}
}

func handleTokenList(a *auth.Service) authedFunc {
	return handleList(a.APITokens, "tokens", newAPITokenJSON)
}

func handleTokenDelete(a *auth.Service) authedFunc {
	return handleByID(a.RevokeAPIToken, "API token revoked")
}
