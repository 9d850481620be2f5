package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"quire"
	"quire/auth"
	"quire/transfer"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyClientAddr
	keyIdempotency // *idempotency.Request of a request holding its key
)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// clientAddr is the client's address as the contract defines it: the TCP
// peer, or, when the peer is a trusted proxy, the right-most address of
// X-Forwarded-For that is not a trusted proxy.
func clientAddr(r *http.Request) string {
	a, _ := r.Context().Value(keyClientAddr).(string)
	return a
}

// requestInfo is where r came from, for the audit log.
func requestInfo(r *http.Request) quire.RequestInfo {
	return quire.RequestInfo{IP: clientAddr(r), RequestID: requestID(r.Context()), UserAgent: r.UserAgent()}
}

// ServeHTTP serves the API alone behind its front (Front): the JSON
// answers for unknown routes and methods cover every path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.front(w, r, http.HandlerFunc(s.serveAPI))
}

// API is the API's own part, without the front: the handler an outer
// router behind Front mounts at the API's paths (/api and below, /healthz,
// /readyz, /metrics).
func (s *Server) API() http.Handler { return http.HandlerFunc(s.serveAPI) }

// Front is the front of every request of the process, whatever serves it
// (the API or the pages behind an outer router): request id, client
// address, nosniff, the no-store header of /api, recovery, metrics and one
// log line.
func (s *Server) Front(routes http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.front(w, r, routes) })
}

func (s *Server) front(w http.ResponseWriter, r *http.Request, next http.Handler) {
	start := time.Now()
	s.metrics.inFlight.Inc()
	defer s.metrics.inFlight.Dec()
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = newRequestID()
	}
	// The web pages behind this front read the id from the request.
	r.Header.Set("X-Request-Id", id)
	ctx := context.WithValue(r.Context(), keyRequestID, id)
	ctx = context.WithValue(ctx, keyClientAddr, auth.ClientAddr(r, s.cfg.TrustedProxies))
	r = r.WithContext(ctx)

	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	rec.Header().Set("X-Request-Id", id)
	// Every answer declares its type; a browser must not guess another (a
	// JSON error read as HTML, a document's text run as script).
	rec.Header().Set("X-Content-Type-Options", "nosniff")
	if isAPIPath(r.URL.Path) {
		// Set here, not in serveAPI: an outer router's own answers (the
		// redirect of a path not in clean form) carry it too.
		rec.Header().Set("Cache-Control", "no-store")
	}
	s.recovering(rec, r, next)

	route := r.Pattern
	if route == "" {
		route = "unmatched"
	}
	d := time.Since(start)
	s.metrics.observe(r.Method, route, rec.status, d)
	s.logger.Info("request", "method", r.Method, "route", route, "status", rec.status,
		"duration_ms", float64(d.Microseconds())/1000, "request_id", id, "client", clientAddr(r))
}

// recovering serves r with next, answering a panic with a 500 in the
// contract's error shape when nothing was written yet.
func (s *Server) recovering(w *statusRecorder, r *http.Request, next http.Handler) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.Error("panic", "request_id", requestID(r.Context()), "panic", v)
			if !w.wrote {
				s.writeError(w, r, &quire.Error{Code: quire.EINTERNAL, Message: "Internal server error"})
			}
		}
	}()
	next.ServeHTTP(w, r)
}

// serveAPI serves a request of the API behind the front: the body limit,
// and the JSON answers for unknown routes and methods.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	t := s.target(r)
	limit, tooLarge := s.cfg.MaxBody, error(errTooLarge)
	if r.Method == http.MethodPost && r.URL.Path == importPath {
		// An archive is bounded by its own limit (the multipart framing
		// around it aside), not by --max-body.
		limit = transfer.MaxArchive + 1<<20
	}
	if uploadRoutes[t.pattern] {
		limit, tooLarge = s.files.MaxUpload()+uploadSlack, s.files.ErrTooLarge()
	}
	if r.ContentLength > limit {
		s.writeError(w, r, tooLarge)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	s.dispatch(w, r, t)
}

// target is who answers a request: a route of the mux, or the mux's own
// answer, captured in probe: a 404, a 405 with Allow for a known path with
// another method, or a redirect to the clean form of the path.
type target struct {
	pattern string // of the route, when routed
	routed  bool
	probe   *headerProbe
}

// target looks the request up once; dispatch then serves it.
func (s *Server) target(r *http.Request) target {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		return target{pattern: pattern, routed: true}
	}
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	return target{probe: probe}
}

// dispatch serves the request as t says, answering the mux's own 404 and
// 405 (with Allow) in the contract's error shape.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, t target) {
	if !t.routed {
		// No route of the API: the outer router's pattern ("/api/") is
		// not one either, for the log line and the metrics.
		r.Pattern = ""
	}
	switch p := t.probe; {
	case t.routed:
		s.mux.ServeHTTP(w, r)
	case p.status == http.StatusMethodNotAllowed:
		w.Header().Set("Allow", p.header.Get("Allow"))
		s.writeError(w, r, quire.Errorf(quire.EMETHODNOTALLOWED, "Method %s is not allowed here", r.Method))
	case p.status >= 300 && p.status < 400 && p.header.Get("Location") != "":
		w.Header().Set("Location", p.header.Get("Location"))
		w.WriteHeader(p.status)
	default:
		s.writeError(w, r, quire.Errorf(quire.ENOTFOUND, "Not found"))
	}
}

// headerProbe captures what the mux's internal handlers would answer.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }
func (p *headerProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
func (p *headerProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func isAPIPath(p string) bool { return p == "/api" || strings.HasPrefix(p, "/api/") }

func validRequestID(id string) bool {
	if len(id) < 1 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}
