package web

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"quire"
	"quire/auth"
)

// handleHome sends a signed-in reader to the documents, anyone else to the
// sign-in page.
func handleHome(s *server) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, err := s.actor(r)
		if err != nil {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return nil
		}
		http.Redirect(w, r, homeOf(a), http.StatusSeeOther)
		return nil
	}
}

// loginPage is the sign-in form.
type loginPage struct {
	layout
	Email string
	Next  string
	Retry string // when a limit or a lock refused the attempt

	Passkeys bool // a passkey may sign in (passkeys.go)

	SSO ssoLogin // sso.go
}

func handleLoginForm(s *server) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		next := safeNext(r.URL.Query().Get("next"))
		if _, err := s.actor(r); err == nil {
			http.Redirect(w, r, orDefault(next, "/documents"), http.StatusSeeOther)
			return nil
		}
		p := loginPage{layout: s.layout(r, nil, "Sign in"), Next: next}
		p.Passkeys = s.passkeysOn()
		p.SSO = s.ssoLogin(r)
		return s.show(w, r, http.StatusOK, "login.html", p)
	}
}

// handleLogin signs in through the same service as the API: the same
// limits, locks and messages, counted per the same client address.
func handleLogin(s *server, a *auth.Service) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := parseForm(r); err != nil {
			return err
		}
		email := r.PostForm.Get("email")
		password := r.PostForm.Get("password")
		next := safeNext(r.PostForm.Get("next"))
		p := loginPage{layout: s.layout(r, nil, "Sign in"), Email: email, Next: next}
		p.Passkeys = s.passkeysOn()
		p.SSO = s.ssoLogin(r)
		p.SSO.PasswordHidden = false // the form was sent: show it with its answer
		if strings.TrimSpace(email) == "" {
			p.Fields["email"] = "Enter your email address."
		}
		if password == "" {
			p.Fields["password"] = "Enter your password."
		}
		if len(p.Fields) > 0 {
			p.Error = "Enter your email address and password."
			return s.show(w, r, http.StatusBadRequest, "login.html", p)
		}
		tz := r.PostForm.Get("timezone")
		if !plausibleZone(tz) {
			// The zone comes from the browser's script, as a comfort: a zone
			// the service would refuse is dropped rather than failing a
			// sign-in whose credentials are right.
			tz = ""
		}
		sess, err := a.Login(r.Context(), s.request(r), email, password, tz)
		if quire.ErrorCode(err) == quire.EVALIDATION && tz != "" {
			sess, err = a.Login(r.Context(), s.request(r), email, password, "")
		}
		if err != nil {
			code := errorCode(err)
			status, ok := statusOf(code)
			if !ok || status >= 500 {
				return err
			}
			p.Error = quire.ErrorMessage(err)
			p.Retry = retryText(err)
			setRetryAfter(w, err)
			return s.show(w, r, status, "login.html", p)
		}
		if sess.MFAToken != "" {
			// The password is right; the second step follows (mfa.go).
			s.renderMFALogin(w, r, http.StatusOK, mfaLoginPage{layout: s.layout(r, nil, "Sign in: second step"),
				MFAToken: sess.MFAToken, Next: next})
			return nil
		}
		s.setSession(w, r, sess)
		http.Redirect(w, r, orDefault(next, homeOf(quire.Actor{User: *sess.User})), http.StatusSeeOther)
		return nil
	}
}

// plausibleZone reports whether tz looks like an IANA zone name worth
// sending to the service (which checks it for real).
func plausibleZone(tz string) bool {
	if tz == "" || len(tz) > 64 {
		return false
	}
	for _, c := range tz {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("/_+-", c)) {
			return false
		}
	}
	return true
}

// handleLogout revokes the session (when there is one) and clears the
// cookie. Signing out of a session that has already ended is no error.
func handleLogout(s *server, a *auth.Service) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		actor, err := s.actor(r)
		switch errorCode(err) {
		case "":
		case quire.EUNAUTHORIZED:
			s.clearSession(w, r)
			http.Redirect(w, r, "/login?m=signed-out", http.StatusSeeOther)
			return nil
		default:
			return err
		}
		if err == nil {
			if err := a.Logout(r.Context(), actor); err != nil {
				return err
			}
		}
		s.clearSession(w, r)
		http.Redirect(w, r, "/login?m=signed-out", http.StatusSeeOther)
		return nil
	}
}

// forgotPage asks for the email of the account to reset.
type forgotPage struct {
	layout
	Email string
	Sent  string
}

func handleForgotForm(s *server) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := forgotPage{layout: s.layout(r, nil, "Forgot password")}
		return s.show(w, r, http.StatusOK, "forgot.html", p)
	}
}

// forgotAnswer is the same whether or not the account exists.
const forgotAnswer = "If an account exists for that email, a reset link has been sent."

func handleForgot(s *server, a *auth.Service) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := parseForm(r); err != nil {
			return err
		}
		email := r.PostForm.Get("email")
		p := forgotPage{layout: s.layout(r, nil, "Forgot password"), Email: email}
		if strings.TrimSpace(email) == "" {
			p.Fields["email"] = "Enter your email address."
			p.Error = "Enter the email address of your account."
			return s.show(w, r, http.StatusBadRequest, "forgot.html", p)
		}
		if err := a.ForgotPassword(r.Context(), s.request(r), email); err != nil {
			status, ok := statusOf(quire.ErrorCode(err))
			if !ok || status >= 500 {
				return err
			}
			p.Error = quire.ErrorMessage(err)
			setRetryAfter(w, err)
			if status == http.StatusTooManyRequests {
				if t := retryText(err); t != "" {
					p.Error += " " + t
				}
			}
			return s.show(w, r, status, "forgot.html", p)
		}
		p.Email = ""
		p.Sent = forgotAnswer
		return s.show(w, r, http.StatusOK, "forgot.html", p)
	}
}

// tokenFlow is one of the two pages that a mailed link opens: the password
// reset and the invitation's setup. Both read the token from the URL and
// send it back by POST; the GET never consumes it.
type tokenFlow struct {
	path   string
	title  string
	intro  string
	button string
	done   string // the sign-in page's ?m= key after success
	redeem func(a *auth.Service, ctx context.Context, req quire.RequestInfo, token, password string) error
	// check says whether redeem would accept the token now, without
	// using it.
	check   func(a *auth.Service, ctx context.Context, token string) error
	badLink string
}

var (
	resetFlow = tokenFlow{
		path:    "/reset-password",
		title:   "Choose a new password",
		intro:   "Choose a new password for your account. Every session signed in with the old one will be signed out.",
		button:  "Reset password",
		done:    "password-reset",
		badLink: "This reset link is invalid, has expired or was already used. Ask for a new one.",
		redeem:  (*auth.Service).ResetPassword,
		check:   (*auth.Service).CheckResetToken,
	}
	setupFlow = tokenFlow{
		path:    "/setup-password",
		title:   "Set your password",
		intro:   "Welcome to quire. Choose the password you will sign in with.",
		button:  "Set password",
		done:    "password-set",
		badLink: "This invitation link is invalid, has expired or was already used. Ask an administrator for a new invitation.",
		redeem:  (*auth.Service).SetupPassword,
		check:   (*auth.Service).CheckSetupToken,
	}
)

// tokenPage is the form a mailed link opens.
type tokenPage struct {
	layout
	Path      string
	Intro     string
	Button    string
	Token     string
	MinLength int
	BadLink   bool
	Forgot    bool // offer to ask for a new reset link
}

func (s *server) tokenPage(r *http.Request, f tokenFlow, token string) tokenPage {
	return tokenPage{
		layout:    s.layout(r, nil, f.title),
		Path:      f.path,
		Intro:     f.intro,
		Button:    f.button,
		Token:     token,
		MinLength: minPasswordLength(s.auth),
		Forgot:    f.path == resetFlow.path,
	}
}

// handleTokenForm shows the form of a mailed link. It only reads the token:
// mail scanners and link previews open links, and must not use them up. A
// link that is unknown, used or expired says so at once, instead of after
// two passwords have been typed; the page tells no more than that (the
// service's check answers only valid or not).
func handleTokenForm(s *server, f tokenFlow) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		token := r.URL.Query().Get("token")
		p := s.tokenPage(r, f, token)
		bad := token == "" || len(token) > 256 || !utf8.ValidString(token)
		if !bad {
			err := f.check(s.auth, r.Context(), token)
			switch errorCode(err) {
			case "":
			case quire.EINVALIDTOKEN:
				bad = true
			default:
				return err
			}
		}
		status := http.StatusOK
		if bad {
			p.Token, p.BadLink, p.Error = "", true, f.badLink
			status = http.StatusBadRequest
		}
		return s.show(w, r, status, "token.html", p)
	}
}

func handleTokenSubmit(s *server, a *auth.Service, f tokenFlow) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := parseForm(r); err != nil {
			return err
		}
		token := r.PostForm.Get("token")
		password := r.PostForm.Get("password")
		p := s.tokenPage(r, f, token)
		if password != r.PostForm.Get("confirm") {
			p.Fields["confirm"] = "The two passwords are not the same."
			p.Error = "The two passwords are not the same. Type the new password twice."
			return s.show(w, r, http.StatusBadRequest, "token.html", p)
		}
		err := f.redeem(a, r.Context(), s.request(r), token, password)
		switch errorCode(err) {
		case "":
			http.Redirect(w, r, "/login?m="+f.done, http.StatusSeeOther)
			return nil
		case quire.EINVALIDTOKEN:
			p.Token, p.BadLink, p.Error = "", true, f.badLink
			return s.show(w, r, http.StatusBadRequest, "token.html", p)
		case quire.EWEAKPASSWORD, quire.EVALIDATION:
			// The token stays usable: the form keeps it for the next try.
			p.Fields["password"] = quire.ErrorMessage(err)
			p.Error = quire.ErrorMessage(err)
			return s.show(w, r, http.StatusBadRequest, "token.html", p)
		}
		return err
	}
}

// passwordPage is the change-password form.
type passwordPage struct {
	layout
	MinLength int
}

func handleChangePasswordForm(s *server) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		p := passwordPage{layout: s.section(r, &actor, "account", "Change password"), MinLength: minPasswordLength(s.auth)}
		return s.show(w, r, http.StatusOK, "password.html", p)
	}
}

// handleChangePassword changes the password through the service: a wrong
// current password counts as a failed sign-in of the account (limits and
// locks), and the user's other sessions are signed out.
func handleChangePassword(s *server, a *auth.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, actor quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		p := passwordPage{layout: s.section(r, &actor, "account", "Change password"), MinLength: minPasswordLength(s.auth)}
		current, next := r.PostForm.Get("current"), r.PostForm.Get("password")
		switch {
		case current == "":
			p.Fields["current"] = "Enter your current password."
		case next != r.PostForm.Get("confirm"):
			p.Fields["confirm"] = "The two passwords are not the same."
		}
		if len(p.Fields) > 0 {
			p.Error = "The password was not changed."
			return s.show(w, r, http.StatusBadRequest, "password.html", p)
		}
		err := a.ChangePassword(r.Context(), actor, s.clientAddr(r), current, next)
		code := errorCode(err)
		switch code {
		case "":
			http.Redirect(w, r, "/documents?m=password-changed", http.StatusSeeOther)
			return nil
		case quire.EINVALIDCURRENT:
			p.Fields["current"] = quire.ErrorMessage(err)
		case quire.EWEAKPASSWORD, quire.EVALIDATION:
			p.Fields["password"] = quire.ErrorMessage(err)
		case quire.ETOOMANYATTEMPTS, quire.EACCOUNTLOCKED:
		default:
			return err
		}
		p.Error = quire.ErrorMessage(err)
		if t := retryText(err); t != "" {
			p.Error += " " + t
		}
		setRetryAfter(w, err)
		status, _ := statusOf(code)
		return s.show(w, r, status, "password.html", p)
	}
}

// minPasswordLength is the minimum the service applies, for the forms'
// hints and minlength attributes (the service checks it for real).
func minPasswordLength(a *auth.Service) int {
	n := a.Config().MinPasswordLength
	if n == 0 {
		n = 15
	}
	return max(n, auth.FloorPasswordLength)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
