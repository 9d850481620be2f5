package web

import (
	"net/http"

	"quire"
)

// homeOf is where a signed-in person starts: the documents, or the welcome
// page for a role that may not read them.
func homeOf(a quire.Actor) string {
	if a.Can(quire.LevelView) {
		return "/documents"
	}
	return "/welcome"
}

func handleWelcome(s *server) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if a.Can(quire.LevelView) {
			http.Redirect(w, r, "/documents", http.StatusSeeOther)
			return nil
		}
		s.renderWelcome(w, r, a, http.StatusOK)
		return nil
	}
}

// renderWelcome tells a person whose role has no view on documents what
// the role allows, whom to ask, and how to sign out.
func (s *server) renderWelcome(w http.ResponseWriter, r *http.Request, a quire.Actor, status int) {
	p := struct {
		layout
		Admin bool
	}{layout: s.layout(r, &a, "Welcome"), Admin: a.User.Role.Admin}
	s.views.render(w, r, status, "welcome.html", p, s.logger)
}
