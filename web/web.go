// Package web is quire's web application: server-rendered pages in the same
// binary as the JSON API, over the same auth and docs services (never over
// the API itself), so that every rule the API enforces (levels, visibility,
// limits, locks, the conflict guard) holds in the pages too.
//
// Pages are html/template files and static files embedded in the binary;
// the little JavaScript there is (static/app.js) only adds comfort, and every
// page works without it. routes.go lists every page.
//
// Every response carries a strict Content-Security-Policy (no inline script
// or style anywhere), X-Frame-Options DENY, nosniff and Referrer-Policy
// no-referrer (reset and setup tokens travel in URLs); dynamic pages are
// Cache-Control no-store. Every POST is checked by net/http's
// CrossOriginProtection before anything else, sign-in included. The session
// is the API's auth_token cookie.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quire"
	"quire/attachments"
	"quire/audit"
	"quire/auth"
	"quire/comments"
	"quire/documents"
	"quire/idempotency"
	"quire/internal/errstatus"
	"quire/internal/lru"
	"quire/live"
	"quire/notify"
	"quire/passkey"
	"quire/render"
	"quire/share"
	"quire/sso"
	"quire/transfer"
	"quire/webhook"
)

// Config is the web application's part of the configuration.
type Config struct {
	// SecureCookies marks the session cookie Secure (the public URL is
	// https); a request that arrived over TLS gets Secure anyway.
	SecureCookies bool
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// the client address is computed (sign-in limits are per address).
	TrustedProxies []netip.Prefix
	// MaxBody bounds a form body in bytes (2 MiB when 0).
	MaxBody int64
	// Keys makes the create and edit forms safe to submit twice (a key
	// per form view); nil saves every submit.
	Keys *idempotency.Service
	// Audit reads the audit log: the Activity page, and who changed a
	// document last; nil shows neither.
	Audit *audit.Service
	// Files lists and deletes the files of documents (their page); nil
	// shows none.
	Files *attachments.Service
	// Webhooks registers receivers of events: the Webhooks page of the
	// Administration area; nil shows none.
	Webhooks *webhook.Service
	// Transfer imports archives: the Import page; nil shows none.
	Transfer *transfer.Service

	// Passkeys registers passkeys (Account page) and signs in with them
	// (sign-in page); nil shows neither.
	Passkeys *passkey.Service

	// HighlightBudget bounds the time highlighting the code of one
	// document may take (package render); 100 ms when 0.
	HighlightBudget time.Duration

	// SSO signs in through an OpenID provider (sso.go); nil: no button.
	SSO *sso.Service

	// Shares are the share links: the public pages under /s/ (shares.go),
	// the Share dialog of a document and the administrators' list; nil
	// shows none.
	Shares *share.Service
	// Comments are the threads beside a document's text (comments.go);
	// nil shows none. OpenThreads counts each listed document's open
	// threads for the documents list; nil shows no counts.
	Comments    *comments.Service
	OpenThreads OpenThreadCounter

	// Notify is the bell, the notifications page and Watch (notify.go);
	// nil shows none. Watches says what a reader watches (the store);
	// without it there is no Watch button. Stream bounds the bell's
	// stream; Shutdown, when closed, ends every stream (the server is
	// stopping: a stream would hold its shutdown until its lifetime ends).
	Notify   *notify.Service
	Watches  WatchStates
	Stream   StreamConfig
	Shutdown <-chan struct{}

	// Live is the live editing server: GET /documents/{id}/live (live.go);
	// nil serves none.
	Live *live.Service
}

// server holds what every page needs.
type server struct {
	cfg    Config
	auth   *auth.Service
	docs   *documents.Service
	logger *slog.Logger
	views  *views
	bodies *render.Cache // rendered content of documents (package render)
	// sharedForms are recent bodies as share pages cut them (shares.go).
	sharedForms *formCache
	cop         *http.CrossOriginProtection
	mux         *http.ServeMux
	// streams are the open streams of the bell (notify.go).
	streams streams
	// columns are recent comments columns as written (comments.go).
	columns *lru.Cache[columnKey, *column]
}

// New returns the web application's handler. It parses every template
// once per process (sharedViews), so that a broken template fails at
// start-up, not on a request.
func New(cfg Config, a *auth.Service, d *documents.Service, logger *slog.Logger) (http.Handler, error) {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 2 << 20
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.Stream = cfg.Stream.withDefaults()
	v, err := sharedViews()
	if err != nil {
		return nil, err
	}
	s := &server{
		cfg:         cfg,
		auth:        a,
		docs:        d,
		logger:      logger,
		views:       v,
		bodies:      render.NewCache(render.CacheBytes, render.CacheEntry, cfg.HighlightBudget),
		columns:     lru.New[columnKey, *column](columnsBytes, columnsEntry),
		sharedForms: &formCache{max: 256},
		cop:         http.NewCrossOriginProtection(),
		mux:         http.NewServeMux(),
	}
	s.routes()
	return s, nil
}

// contentSecurityPolicy allows nothing inline and nothing from elsewhere:
// scripts and styles come only from /static, images from here or data: URIs
// (Markdown may embed small ones), and no page may be framed.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// styleNoncer is the data of a page whose own script adds <style>
// elements (the editor's CodeMirror, which cannot style itself otherwise):
// its CSP allows those that carry the page's nonce, a fresh random value
// per response, and still no style attribute and no inline script.
type styleNoncer interface{ styleNonce() string }

// policyWithStyleNonce is contentSecurityPolicy with nonce allowed in
// style-src.
func policyWithStyleNonce(nonce string) string {
	return strings.Replace(contentSecurityPolicy, "style-src 'self';", "style-src 'self' 'nonce-"+nonce+"';", 1)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
	if sh := s.cfg.Shares; sh != nil && strings.HasPrefix(r.URL.Path, "/s/") {
		s.serveShare(w, r, sh) // shares.go: every path under /s/, clean or not
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Handlers return errors; the adapters below turn them into pages.
type (
	// pageFunc is a page anyone may open.
	pageFunc func(w http.ResponseWriter, r *http.Request) error
	// actorFunc is a page for signed-in users.
	actorFunc func(w http.ResponseWriter, r *http.Request, a quire.Actor) error
)

// public adapts a page that needs no sign-in. POSTs are checked for
// cross-origin first.
func (s *server) public(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noStore(w)
		if err := s.checkUnsafe(w, r); err != nil {
			s.fail(w, r, nil, err)
			return
		}
		if err := fn(w, r); err != nil {
			s.fail(w, r, nil, err)
		}
	})
}

// signedIn adapts a page for signed-in users: without a valid session a GET
// is sent to the sign-in page (and back afterwards), anything else too.
func (s *server) signedIn(fn actorFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noStore(w)
		if err := s.checkUnsafe(w, r); err != nil {
			s.fail(w, r, nil, err)
			return
		}
		actor, err := s.actor(r)
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		if actor.User.MustChangePassword && r.URL.Path != "/account/password" {
			// The first administrator's printed password: nothing else
			// until it chose its own (product.md section 9).
			http.Redirect(w, r, "/account/password?m=must-change", http.StatusSeeOther)
			return
		}
		if ok, err := s.mfaGate(w, r, actor); !ok {
			if err != nil {
				s.fail(w, r, &actor, err)
			}
			return // sent to the set-up of a second factor (mfa.go)
		}
		if err := fn(w, r, actor); err != nil {
			s.fail(w, r, &actor, err)
		}
	})
}

var (
	errCrossOrigin = quire.Errorf(quire.ECROSSORIGIN, "This form was sent from another site, so it was refused. Open the page here and send it again.")
	errTooLarge    = quire.Errorf(quire.EPAYLOADTOOLARGE, "The form is too large to be saved.")
	errBadForm     = quire.Errorf(quire.EVALIDATION, "The form could not be read. Reload the page and try again.")
	errBadText     = quire.Errorf(quire.EVALIDATION, "The form holds characters that cannot be stored (invalid UTF-8 or NUL). Remove them and try again.")
)

// checkUnsafe refuses a cross-origin POST (the way net/http's
// CrossOriginProtection decides, which is also the API's rule) and bounds
// the body of every other one.
func (s *server) checkUnsafe(w http.ResponseWriter, r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if err := s.cop.Check(r); err != nil {
		return errCrossOrigin
	}
	limit := s.cfg.MaxBody
	if r.URL.Path == "/import" {
		limit = transfer.MaxArchive + 1<<20 // an archive, spooled to a file
	}
	if r.ContentLength > limit {
		return errTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	return nil
}

// parseForm reads an urlencoded form body. A body over the limit or one
// that cannot be read is the client's fault: 413 or 400. So is a value
// that is not valid UTF-8 or holds a NUL character: no field takes one,
// and a database would refuse to compare it.
func parseForm(r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errTooLarge
		}
		return errBadForm
	}
	for _, vs := range r.Form {
		for _, v := range vs {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return errBadText
			}
		}
	}
	return nil
}

// writeForm refuses a reader before the body is read, as the API does,
// then reads the form as parseForm does.
func writeForm(r *http.Request, a quire.Actor) error {
	if err := documents.Require(a, quire.LevelWrite); err != nil {
		return err
	}
	return parseForm(r)
}

// handleByID runs act on the {id} of the path and, once it succeeds, sends
// the browser on to where(id): the shape of each button that changes one
// thing and then shows the page that tells the outcome.
func handleByID(act func(context.Context, quire.Actor, string) error, where func(id string) string) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		id := r.PathValue("id")
		if err := act(r.Context(), a, id); err != nil {
			return err
		}
		http.Redirect(w, r, where(id), http.StatusSeeOther)
		return nil
	}
}

// to is a where for handleByID that does not depend on the id.
func to(target string) func(string) string {
	return func(string) string { return target }
}

// confirmPage asks before an action on one document.
type confirmPage struct {
	layout
	Doc *quire.Document
}

// handleConfirm shows tmpl, the question asked before an action on the
// document of the path: a writer's action, on the document find returns,
// which check (when not nil) may still refuse. The page's title is title
// followed by the document's, and nav is its place in the menu.
func handleConfirm(s *server, find func(context.Context, quire.Actor, string) (*quire.Document, error),
	check func(quire.Actor, *quire.Document) error, title, nav, tmpl string) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		doc, err := find(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(a, doc); err != nil {
				return err
			}
		}
		p := confirmPage{layout: s.layout(r, &a, title+doc.Title), Doc: doc}
		p.Nav = nav
		return s.show(w, r, http.StatusOK, tmpl, p)
	}
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
}

// statusOf is the API's status for an error code; a uniqueness clash is
// the client's (400). ok is false for a code neither names.
func statusOf(code string) (status int, ok bool) {
	if code == quire.ECONFLICT {
		return http.StatusBadRequest, true
	}
	return errstatus.Of(code)
}

// headings of the error page, by status.
var headings = map[int]string{
	http.StatusBadRequest:            "This request could not be understood",
	http.StatusForbidden:             "You do not have access to this page",
	http.StatusNotFound:              "Page not found",
	http.StatusMethodNotAllowed:      "Method not allowed",
	http.StatusConflict:              "Conflict",
	http.StatusRequestEntityTooLarge: "Too large",
	http.StatusTooManyRequests:       "Too many attempts",
	http.StatusServiceUnavailable:    "Temporarily unavailable",
	http.StatusInternalServerError:   "Something went wrong",
}

// fail answers err with a page. An expired or missing session sends the
// browser to the sign-in page; errors without a code are internal: logged,
// and shown without detail.
func (s *server) fail(w http.ResponseWriter, r *http.Request, actor *quire.Actor, err error) {
	var e *quire.Error
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
			return // the client went away
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, quire.ErrUnavailable):
			s.logger.Error("web: service unavailable", "path", r.URL.Path, "err", err)
			e = &quire.Error{Code: quire.EUNAVAILABLE, Message: "The service is temporarily unavailable. Please try again in a moment.", RetryAfter: time.Second}
		default:
			s.logger.Error("web: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
			e = &quire.Error{Code: quire.EINTERNAL, Message: "Internal server error"}
		}
	}
	if e.Code == quire.EUNAUTHORIZED {
		s.clearSession(w, r)
		http.Redirect(w, r, loginURL(r), http.StatusSeeOther)
		return
	}
	status, ok := statusOf(e.Code)
	if !ok {
		status = http.StatusInternalServerError
	}
	if e.Code == quire.EFORBIDDEN && actor != nil && !actor.Can(quire.LevelView) {
		// A role without view never meets a dead end: it is told what it
		// may do and how to sign out (welcome.go).
		s.renderWelcome(w, r, *actor, status)
		return
	}
	msg := e.Message
	if status >= 500 && e.Code != quire.EUNAVAILABLE {
		if e.Code != quire.EINTERNAL {
			s.logger.Error("web: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		msg = "Something went wrong on our side. It has been logged; please try again."
	} else {
		s.logger.Debug("web: client error", "path", r.URL.Path, "code", e.Code, "err", err)
	}
	setRetryAfter(w, e)
	data := struct {
		layout
		Status  int
		Heading string
		Message string
	}{
		layout:  s.layout(r, actor, headings[status]),
		Status:  status,
		Heading: headings[status],
		Message: msg,
	}
	if data.Heading == "" {
		data.Heading = http.StatusText(status)
		data.Title = data.Heading
	}
	s.views.render(w, r, status, "error.html", data, s.logger)
}

// errorCode is the code of err: "" for no error (quire.ErrorCode answers
// INTERNAL for nil), INTERNAL for an error without one.
func errorCode(err error) string {
	if err == nil {
		return ""
	}
	return quire.ErrorCode(err)
}

// setRetryAfter sends the Retry-After of a refused attempt, if it has one.
func setRetryAfter(w http.ResponseWriter, err error) {
	var e *quire.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(e.RetryAfter), 10))
	}
}

func retrySeconds(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }

// retryText says when a refused attempt may be tried again.
func retryText(err error) string {
	var e *quire.Error
	if !errors.As(err, &e) || e.RetryAfter <= 0 {
		return ""
	}
	secs := retrySeconds(e.RetryAfter)
	switch {
	case secs < 60:
		return "You can try again in less than a minute."
	case secs < 120:
		return "You can try again in about a minute."
	default:
		return fmt.Sprintf("You can try again in about %d minutes.", (secs+59)/60)
	}
}

// loginURL is the sign-in page, with the way back to where the browser was
// going when that is a page to return to.
func loginURL(r *http.Request) string {
	if r.Method != http.MethodGet || r.URL.Path == "/" {
		return "/login"
	}
	return "/login?" + url.Values{"next": {r.URL.RequestURI()}}.Encode()
}

// notFound answers paths no page has (404), and pages asked with a method
// they do not take (405 with Allow).
func (s *server) notFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noStore(w)
		var actor *quire.Actor
		if a, err := s.actor(r); err == nil {
			actor = &a
		}
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
				allow = append(allow, m)
				if m == http.MethodGet {
					allow = append(allow, http.MethodHead)
				}
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.fail(w, r, actor, quire.Errorf(quire.EMETHODNOTALLOWED, "This page does not take %s requests.", r.Method))
			return
		}
		s.missing(w, r, actor)
	})
}

// missing answers the not-found page. A handler whose pattern matched but
// that has nothing at the path (a static file that does not exist) calls it
// directly: notFound would find the pattern and answer 405.
func (s *server) missing(w http.ResponseWriter, r *http.Request, actor *quire.Actor) {
	noStore(w)
	s.fail(w, r, actor, quire.Errorf(quire.ENOTFOUND, "There is no page at this address."))
}
