package web

import (
	"context"
	"net/http"

	"quire"
	"quire/live"
)

// handleLive is GET /documents/{id}/live: the live connection of a
// document (package live; README, "Live editing"), upgraded to a
// WebSocket. It takes the session cookie and the Origin rule of the forms
// (a cross-origin upgrade is refused: 403), and answers 404 for a
// document the person cannot see, as the document's page. A person who
// must still change the first password or set up a second factor is
// answered 401, as the bell's stream.
func handleLive(s *server, lv *live.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noStore(w)
		// The browser's WebSocket sends Origin with the upgrade, but a GET
		// is "safe" to CrossOriginProtection: check it as a POST.
		post := r.Clone(r.Context())
		post.Method = http.MethodPost
		if err := s.cop.Check(post); err != nil {
			s.fail(w, r, nil, errCrossOrigin)
			return
		}
		c, err := r.Cookie(cookieName)
		if err != nil || c.Value == "" {
			http.Error(w, "Sign in to edit live.", http.StatusUnauthorized)
			return
		}
		token := c.Value
		authorize := func(ctx context.Context) (quire.Actor, error) {
			a, err := s.auth.Authenticate(ctx, token)
			if err != nil {
				return a, err
			}
			if a.User.MustChangePassword {
				return a, errSignedOut
			}
			if err := s.auth.MFA().SetupRequired(ctx, a); err != nil {
				if quire.ErrorCode(err) == quire.EMFASETUPREQUIRED {
					return a, errSignedOut
				}
				return a, err
			}
			return a, nil
		}
		a, err := authorize(r.Context())
		if err != nil {
			if quire.ErrorCode(err) == quire.EUNAUTHORIZED {
				http.Error(w, "Sign in to edit live.", http.StatusUnauthorized)
				return
			}
			s.fail(w, r, nil, err)
			return
		}
		a.Request = s.request(r)
		id := r.PathValue("id")
		if err := lv.Check(r.Context(), a, id); err != nil {
			s.fail(w, r, &a, err)
			return
		}
		lv.Serve(w, r, a, id, authorize)
	})
}
