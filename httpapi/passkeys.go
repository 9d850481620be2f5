package httpapi

import (
	"encoding/json"
	"net/http"

	"quire"
	"quire/auth"
	"quire/passkey"
)

// passkeyJSON is one of the caller's passkeys: never its key material.
// lastUsedAt is null until it first signs someone in.
type passkeyJSON struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	CreatedAt  string   `json:"createdAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
	Transports []string `json:"transports"`
}

func newPasskeyJSON(p *quire.Passkey) passkeyJSON {
	out := passkeyJSON{ID: p.ID, Name: p.Name, CreatedAt: formatTime(p.CreatedAt), Transports: p.Transports}
	if out.Transports == nil {
		out.Transports = []string{}
	}
	if !p.LastUsedAt.IsZero() {
		t := formatTime(p.LastUsedAt)
		out.LastUsedAt = &t
	}
	return out
}

func handlePasskeyList(pk *passkey.Service) authedFunc {
	return handleList(pk.List, "passkeys", newPasskeyJSON)
}

// handlePasskeyRegisterBegin answers the options of
// navigator.credentials.create ({"publicKey": ...}, binary members in
// base64url).
func handlePasskeyRegisterBegin(pk *passkey.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		creation, err := pk.BeginRegistration(r.Context(), actor)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, creation)
	}
}

func handlePasskeyRegisterFinish(pk *passkey.Service) authedFunc {
	type request struct {
		Name       *string         `json:"name"`
		Credential json.RawMessage `json:"credential"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		req, err := decode[request](w, r)
		if err != nil {
			return err
		}
		if err := requiredJSON("credential", req.Credential); err != nil {
			return err
		}
		name := ""
		if req.Name != nil {
			name = *req.Name
		}
		p, err := pk.FinishRegistration(r.Context(), actor, name, req.Credential)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, map[string]any{"passkey": newPasskeyJSON(p)})
	}
}

func handlePasskeyRename(pk *passkey.Service) authedFunc {
	type request struct {
		Name *string `json:"name"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		req, err := decode[request](w, r)
		if err != nil {
			return err
		}
		if err := present(map[string]*string{"name": req.Name}); err != nil {
			return err
		}
		p, err := pk.Rename(r.Context(), actor, r.PathValue("id"), *req.Name)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"passkey": newPasskeyJSON(p)})
	}
}

func handlePasskeyDelete(pk *passkey.Service) authedFunc {
	return handleByID(pk.Remove, "Passkey removed")
}

// handlePasskeyLoginBegin answers the options of navigator.credentials.get
// for a sign-in with a passkey alone. Like a sign-in, it is refused
// cross-origin whatever carries it.
func handlePasskeyLoginBegin(pk *passkey.Service, checkOrigin func(*http.Request) error) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := checkOrigin(r); err != nil {
			return err
		}
		assertion, err := pk.BeginLogin(r.Context(), requestInfo(r))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, assertion)
	}
}

// handlePasskeyLoginFinish answers as POST /api/auth/login does: the
// session's token, its cookie, and the user.
func handlePasskeyLoginFinish(pk *passkey.Service, a *auth.Service, secure bool, checkOrigin func(*http.Request) error) apiFunc {
	type request struct {
		Credential json.RawMessage `json:"credential"`
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeSameOrigin[request](w, r, checkOrigin)
		if err != nil {
			return err
		}
		if err := requiredJSON("credential", req.Credential); err != nil {
			return err
		}
		sess, err := pk.FinishLogin(r.Context(), requestInfo(r), req.Credential)
		if err != nil {
			return err
		}
		return writeSignedIn(w, r, a, sess, secure)
	}
}
