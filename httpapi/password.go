package httpapi

import (
	"context"
	"net/http"

	"quire"
	"quire/auth"
)

// The password endpoints of contract section 4. A field that is absent (or
// null) is "is required"; a present but empty password is simply too short
// (WEAK_PASSWORD, or INVALID_CURRENT_PASSWORD for the current one).

func handleForgotPassword(a *auth.Service) apiFunc {
	type request struct {
		Email *string `json:"email"`
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[request](w, r)
		if err != nil {
			return err
		}
		if err := present(map[string]*string{"email": req.Email}); err != nil {
			return err
		}
		if err := a.ForgotPassword(r.Context(), requestInfo(r), *req.Email); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{
			"message": "If an account exists for that email, a reset link has been sent.",
		})
	}
}

type tokenPasswordRequest struct {
	Token    *string `json:"token"`
	Password *string `json:"password"`
}

func (req tokenPasswordRequest) check() error {
	fields := map[string]string{}
	if req.Token == nil || *req.Token == "" {
		fields["token"] = "is required"
	}
	if req.Password == nil {
		fields["password"] = "is required"
	}
	if len(fields) > 0 {
		return quire.Invalid(fields)
	}
	return nil
}

// handleTokenPassword serves reset-password and setup-password: a
// single-use token and a new password, spent by use, answered with message.
func handleTokenPassword(use func(ctx context.Context, req quire.RequestInfo, token, password string) error, message string) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[tokenPasswordRequest](w, r)
		if err != nil {
			return err
		}
		if err := req.check(); err != nil {
			return err
		}
		if err := use(r.Context(), requestInfo(r), *req.Token, *req.Password); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{"message": message})
	}
}

func handleChangePassword(a *auth.Service) authedFunc {
	type request struct {
		CurrentPassword *string `json:"currentPassword"`
		NewPassword     *string `json:"newPassword"`
	}
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		req, err := decode[request](w, r)
		if err != nil {
			return err
		}
		if err := present(map[string]*string{"currentPassword": req.CurrentPassword, "newPassword": req.NewPassword}); err != nil {
			return err
		}
		if err := a.ChangePassword(r.Context(), actor, clientAddr(r), *req.CurrentPassword, *req.NewPassword); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{"message": "Password changed"})
	}
}
