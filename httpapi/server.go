// Package httpapi is quire's JSON API over HTTP. routes.go lists every route;
// handlers are made by handle* functions with explicit dependencies; one
// adapter turns returned errors into the contract's error shape.
package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"quire"
	"quire/attachments"
	"quire/audit"
	"quire/auth"
	"quire/comments"
	"quire/documents"
	"quire/idempotency"
	"quire/internal/errstatus"
	"quire/live"
	"quire/mail"
	"quire/notify"
	"quire/passkey"
	"quire/share"
	"quire/transfer"
	"quire/webhook"
)

// Config is the HTTP layer's part of the configuration.
type Config struct {
	MaxBody        int64          // request body limit in bytes
	TrustedProxies []netip.Prefix // peers whose X-Forwarded-For is believed
	SecureCookies  bool           // the public URL is https: cookies get Secure
	// Now is the clock of the ages /metrics reports (time.Now when nil);
	// tests set it.
	Now func() time.Time

	// MetricsToken, when set, is the bearer token /metrics requires.
	// MetricsElsewhere takes /metrics off this handler (404): it is served
	// by MetricsHandler on an address of its own.
	MetricsToken     string
	MetricsElsewhere bool
}

// Store is what the API reads from persistence itself: whether the
// database answers (/readyz) and its figures (/metrics). Everything else
// goes through the services.
type Store interface {
	quire.StatsStore
	Ping(ctx context.Context) error
}

// Services are what the API serves, each built once by the composition
// root (cmd/quire) and shared with the pages: one limit of imports at
// once, one configuration of uploads, one passkey ceremony store.
type Services struct {
	Auth        *auth.Service
	Documents   *documents.Service
	Audit       *audit.Service
	Idempotency *idempotency.Service
	Attachments *attachments.Service
	Webhooks    *webhook.Service
	Transfer    *transfer.Service
	Passkeys    *passkey.Service
	Comments    *comments.Service
	// Shares are the share links (product.md section 21); nil serves
	// none of their routes.
	Shares *share.Service
	Notify *notify.Service
	// Live is the live editing server, whose presence the API tells; nil
	// serves no presence route.
	Live *live.Service
	// Mail is this process's outbox worker, whose deliveries /metrics
	// counts; nil leaves them out.
	Mail *mail.Worker
}

// Server serves the API.
type Server struct {
	cfg      Config
	store    Store
	auth     *auth.Service
	docs     *documents.Service
	audit    *audit.Service
	idem     *idempotency.Service
	files    *attachments.Service
	hooks    *webhook.Service
	xfer     *transfer.Service
	passkeys *passkey.Service
	comments *comments.Service
	shares   *share.Service
	notify   *notify.Service
	live     *live.Service
	logger   *slog.Logger
	mux      *http.ServeMux
	metrics  *metrics
	cop      *http.CrossOriginProtection
}

// New returns the API server over the services svc (all but Mail are
// required: a nil one panics). Its handler is the Server itself, the API
// alone; Front puts the same front before an outer router that serves the
// pages beside it.
func New(cfg Config, store Store, svc Services, logger *slog.Logger) *Server {
	for _, c := range []struct {
		name    string
		missing bool
	}{{"Auth", svc.Auth == nil}, {"Documents", svc.Documents == nil}, {"Audit", svc.Audit == nil},
		{"Idempotency", svc.Idempotency == nil}, {"Attachments", svc.Attachments == nil},
		{"Webhooks", svc.Webhooks == nil}, {"Transfer", svc.Transfer == nil}, {"Passkeys", svc.Passkeys == nil},
		{"Comments", svc.Comments == nil}, {"Notify", svc.Notify == nil}} {
		if c.missing {
			panic("httpapi.New: Services." + c.name + " is nil")
		}
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 2 << 20
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		cfg:      cfg,
		store:    store,
		auth:     svc.Auth,
		docs:     svc.Documents,
		audit:    svc.Audit,
		idem:     svc.Idempotency,
		files:    svc.Attachments,
		hooks:    svc.Webhooks,
		xfer:     svc.Transfer,
		passkeys: svc.Passkeys,
		comments: svc.Comments,
		shares:   svc.Shares,
		notify:   svc.Notify,
		live:     svc.Live,
		logger:   logger,
		mux:      http.NewServeMux(),
		metrics:  newMetrics(&figures{store: store, auth: svc.Auth, mail: svc.Mail, now: now, logger: logger}),
		cop:      http.NewCrossOriginProtection(),
	}
	if cfg.MetricsToken != "" {
		sum := sha256.Sum256([]byte(cfg.MetricsToken))
		s.metrics.tokenHash = sum[:]
	}
	s.routes()
	return s
}

// apiFunc is a public endpoint; authedFunc a signed-in one. Both return
// errors, which the adapters write in the contract's shape.
type (
	apiFunc    func(w http.ResponseWriter, r *http.Request) error
	authedFunc func(w http.ResponseWriter, r *http.Request, a quire.Actor) error
)

// public adapts an apiFunc.
func (s *Server) public(fn apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// authed adapts an authedFunc: it authenticates the caller (header first,
// then cookie), for unsafe methods authenticated by the cookie alone
// refuses cross-origin requests, and holds a personal API token to what
// tokens may do (tokenAllows).
func (s *Server) authed(fn authedFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		actor, err := s.authenticate(r)
		actor.Request = requestInfo(r)
		if err == nil && actor.ViaToken() {
			err = tokenAllows(r, actor)
		}
		if err == nil {
			err = s.mfaGate(r, actor) // mfa.go
		}
		if err == nil {
			err = fn(w, r, actor)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

var errUnauthorized = quire.Errorf(quire.EUNAUTHORIZED, "Authentication required")

func (s *Server) authenticate(r *http.Request) (quire.Actor, error) {
	if h, ok := r.Header["Authorization"]; ok {
		// Any Authorization header means header authentication: no
		// fall-back to the cookie when it is malformed.
		token, ok := bearerToken(h)
		if !ok {
			return quire.Actor{}, errUnauthorized
		}
		if auth.IsAPIToken(token) {
			return s.auth.AuthenticateAPIToken(r.Context(), token)
		}
		return s.auth.Authenticate(r.Context(), token)
	}
	// The cookie carries sessions only: a personal API token there is an
	// unknown session.
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return quire.Actor{}, errUnauthorized
	}
	if err := s.checkOrigin(r); err != nil {
		return quire.Actor{}, err
	}
	return s.auth.Authenticate(r.Context(), c.Value)
}

var (
	errTokenDocumentsOnly = quire.Errorf(quire.EFORBIDDEN, "API tokens work on the documents API only")
	errTokenReadOnly      = quire.Errorf(quire.EFORBIDDEN, "This API token may only read")
)

// tokenAllows says whether a personal API token may call the route of r:
// only routes under /api/documentation/, and, with a read token, only safe
// methods. The documents service caps writes by the scope as well
// (quire.Actor.Can); this answers every refused write the same, before any
// body is read.
func tokenAllows(r *http.Request, actor quire.Actor) error {
	_, path, _ := strings.Cut(r.Pattern, " ")
	if !strings.HasPrefix(path, "/api/documentation/") {
		return errTokenDocumentsOnly
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if actor.Scope != quire.ScopeWrite {
		return errTokenReadOnly
	}
	return nil
}

func bearerToken(h []string) (string, bool) {
	if len(h) != 1 {
		return "", false
	}
	const prefix = "bearer "
	v := h[0]
	if len(v) <= len(prefix) || !strings.EqualFold(v[:len(prefix)], prefix) {
		return "", false
	}
	token := v[len(prefix):]
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c >= 0x7f {
			return "", false
		}
	}
	return token, true
}

var errCrossOrigin = quire.Errorf(quire.ECROSSORIGIN, "Cross-origin request refused")

// checkOrigin refuses unsafe cross-origin requests the way net/http's
// CrossOriginProtection decides (Sec-Fetch-Site, then Origin against Host).
func (s *Server) checkOrigin(r *http.Request) error {
	if err := s.cop.Check(r); err != nil {
		return errCrossOrigin
	}
	return nil
}

// writeError writes err in the contract's error shape. Errors without a
// code are internal: logged with the request id, shown as a bare 500.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *quire.Error
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
			// The client went away; nobody reads the answer.
			s.logger.Debug("request canceled", "request_id", requestID(r.Context()))
			w.WriteHeader(499)
			return
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, quire.ErrUnavailable):
			s.logger.Error("service unavailable", "request_id", requestID(r.Context()), "err", err)
			e = &quire.Error{Code: quire.EUNAVAILABLE, Message: "The service is temporarily unavailable", RetryAfter: time.Second}
		default:
			s.logger.Error("internal error", "request_id", requestID(r.Context()), "err", err)
			e = &quire.Error{Code: quire.EINTERNAL, Message: "Internal server error"}
		}
	}
	status, ok := errstatus.Of(e.Code)
	if !ok {
		status = http.StatusInternalServerError
		if e.Code == quire.ECONFLICT {
			// A uniqueness clash a client caused: name the field when the
			// store did.
			status, e = http.StatusBadRequest, &quire.Error{Code: quire.EVALIDATION, Message: e.Message, Fields: e.Fields}
		}
	}
	if status >= 500 {
		if e.Code != quire.EINTERNAL && e.Code != quire.EUNAVAILABLE {
			s.logger.Error("internal error", "request_id", requestID(r.Context()), "err", err)
			e = &quire.Error{Code: quire.EINTERNAL, Message: "Internal server error"}
		}
	} else {
		s.logger.Debug("client error", "request_id", requestID(r.Context()), "code", e.Code, "err", err)
	}
	body := errorBody{Code: e.Code, Message: e.Message, Fields: e.Fields}
	if e.Code == quire.EDOCUMENTCONFLICT && e.Document != nil {
		body.UpdatedAt = formatTime(e.UpdatedAt)
		body.Document = documentJSON(e.Document, true)
	}
	if e.RetryAfter > 0 {
		secs := int64((e.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	writeJSON(w, status, body)
}
