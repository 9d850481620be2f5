package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"quire"
	"quire/auth"
	"quire/mfa"
)

// accountPage lists the signed-in sessions and the personal API tokens of
// the reader, with the form that creates a token.
type accountPage struct {
	layout
	Sessions []sessionRow
	Tokens   []quire.APIToken
	// The create form, as sent when it was refused.
	Name    string
	Scope   string
	Days    int
	DayList []int
	// The second factor (mfa.go): where it stands, and the set-up that
	// waits for its confirmation.
	MFA       mfa.Status
	Enrolment *mfa.Enrolment

	passkeySection // passkeys.go
}

type sessionRow struct {
	quire.Session
	Browser string
	Current bool
}

// tokenDays are the lifetimes the form offers, in days; 90 is the default
// and 366 the longest the service allows.
var tokenDays = []int{7, 30, 90, 180, 366}

const defaultTokenDays = 90

// accountRefused shows the account page again, 400, saying msg, with what
// fill adds: the refused field's message, the values that were typed.
func (s *server) accountRefused(w http.ResponseWriter, r *http.Request, actor quire.Actor, msg string, fill func(p *accountPage)) error {
	p, err := s.accountPage(r, actor)
	if err != nil {
		return err
	}
	fill(&p)
	p.Error = msg
	return s.show(w, r, http.StatusBadRequest, "account.html", p)
}

func (s *server) accountPage(r *http.Request, actor quire.Actor) (accountPage, error) {
	p := accountPage{layout: s.section(r, &actor, "account", "Account"), Scope: "read", Days: defaultTokenDays, DayList: tokenDays}
	sessions, err := s.auth.Sessions(r.Context(), actor)
	if err != nil {
		return p, err
	}
	for _, sess := range sessions {
		p.Sessions = append(p.Sessions, sessionRow{Session: sess, Browser: browserName(sess.UserAgent), Current: sess.ID == actor.SessionID})
	}
	p.Tokens, err = s.auth.APITokens(r.Context(), actor)
	if err != nil {
		return p, err
	}
	if p.MFA, err = s.auth.MFA().Status(r.Context(), actor); err != nil {
		return p, err
	}
	if p.MFA.Waiting {
		if p.Enrolment, err = s.auth.MFA().Pending(r.Context(), actor); err != nil {
			return p, err
		}
	}
	p.passkeySection, err = s.passkeySection(r, actor)
	return p, err
}

func handleAccount(s *server) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		p, err := s.accountPage(r, actor)
		if err != nil {
			return err
		}
		return s.show(w, r, http.StatusOK, "account.html", p)
	}
}

// tokenCreatedPage shows a new token's secret, this once: it is answered to
// the POST itself (never put in a URL to redirect to) and not stored.
type tokenCreatedPage struct {
	layout
	Token  *quire.APIToken
	Secret string
}

func handleTokenCreate(s *server, a *auth.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		name, scope := r.PostForm.Get("name"), r.PostForm.Get("scope")
		days, err := strconv.Atoi(r.PostForm.Get("days"))
		valid := err == nil && days >= 1 && days <= 366
		var expires *time.Time
		if valid {
			at := s.auth.Config().Now().Add(time.Duration(days) * 24 * time.Hour)
			expires = &at
		}
		var (
			t      *quire.APIToken
			secret string
		)
		if valid {
			t, secret, err = a.CreateAPIToken(r.Context(), actor, name, scope, expires)
		} else {
			err = quire.Invalid(map[string]string{"expiresAt": "must be one of the lifetimes offered"})
		}
		switch errorCode(err) {
		case "":
			p := tokenCreatedPage{layout: s.section(r, &actor, "account", "API token created"), Token: t, Secret: secret}
			return s.show(w, r, http.StatusOK, "token-created.html", p)
		case quire.EVALIDATION:
		default:
			return err
		}
		return s.accountRefused(w, r, actor, "The token was not created.", func(p *accountPage) {
			p.Name, p.Scope, p.Days = name, scope, days
			var e *quire.Error
			if errors.As(err, &e) {
				for k, v := range e.Fields {
					p.Fields[k] = "The " + fieldLabel(k) + " " + v + "."
				}
			}
		})
	}
}

func fieldLabel(k string) string {
	switch k {
	case "expiresAt":
		return "lifetime"
	}
	return k
}

func handleTokenRevoke(a *auth.Service) actorFunc {
	return handleByID(a.RevokeAPIToken, to("/account?m=token-revoked"))
}

// handleSessionRevoke signs out one session of the reader; the reader's own
// is a sign-out.
func handleSessionRevoke(s *server, a *auth.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		id := r.PathValue("id")
		if err := a.RevokeSession(r.Context(), actor, id); err != nil {
			return err
		}
		if id == actor.SessionID {
			s.clearSession(w, r)
			http.Redirect(w, r, "/login?m=signed-out", http.StatusSeeOther)
			return nil
		}
		http.Redirect(w, r, "/account?m=session-revoked", http.StatusSeeOther)
		return nil
	}
}

func handleOtherSessionsRevoke(a *auth.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := a.RevokeOtherSessions(r.Context(), actor); err != nil {
			return err
		}
		http.Redirect(w, r, "/account?m=sessions-revoked", http.StatusSeeOther)
		return nil
	}
}

// browserName names the browser and system of a User-Agent for the list of
// sessions, roughly; the full string is shown on hover.
func browserName(ua string) string {
	if ua == "" {
		return "Unknown browser"
	}
	name := ""
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chromium/", "Chromium"},
		{"HeadlessChrome/", "Chromium (headless)"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"}, {"curl/", "curl"},
	} {
		if strings.Contains(ua, b.token) {
			name = b.name
			break
		}
	}
	if name == "" {
		return "Other client"
	}
	for _, o := range []struct{ token, name string }{
		{"Android", "Android"}, {"iPhone", "iOS"}, {"iPad", "iPadOS"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			return name + " on " + o.name
		}
	}
	return name
}
