package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"quire"
	"quire/auth"
	"quire/internal/buildinfo"
	"quire/mail"
)

// metrics is the server's own Prometheus registry: no global state, so that
// several servers can run in one test process.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// tokenHash is the SHA-256 of --metrics-token, nil without one.
	tokenHash []byte
}

func newMetrics(figures *figures) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quire_http_requests_total",
			Help: "HTTP requests by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "quire_http_request_duration_seconds",
			Help:    "HTTP request duration by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "quire_http_requests_in_flight",
			Help: "HTTP requests being served now (this scrape included).",
		}),
	}
	bi := buildinfo.Read()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "quire_build_info",
		Help:        "Always 1; the labels say which quire is running.",
		ConstLabels: prometheus.Labels{"version": bi.Version, "revision": bi.Revision, "goversion": bi.GoVersion},
	})
	build.Set(1)
	m.reg.MustRegister(m.requests, m.duration, m.inFlight, build, figures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

// handler serves the scrape; with a token, only to a request that bears it
// (Authorization: Bearer TOKEN), compared in constant time through its
// hash, and anything else is 401 UNAUTHORIZED.
func (m *metrics) handler(s *Server) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	if m.tokenHash == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(given))
		if !ok || subtle.ConstantTimeCompare(sum[:], m.tokenHash) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="quire metrics"`)
			s.writeError(w, r, &quire.Error{Code: quire.EUNAUTHORIZED, Message: "The metrics need the token given to quire as --metrics-token"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// MetricsHandler serves the scrape of /metrics on its own (quire serve
// --metrics-addr), with the request id, the token check and the counts of
// requests in flight of the API's front; Config.MetricsElsewhere then
// takes /metrics off the API's address.
func (s *Server) MetricsHandler() http.Handler {
	h := s.metrics.handler(s)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.metrics.inFlight.Inc()
		defer s.metrics.inFlight.Dec()
		id := newRequestID()
		r = r.WithContext(context.WithValue(r.Context(), keyRequestID, id))
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.URL.Path != "/metrics" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			s.writeError(w, r, &quire.Error{Code: quire.ENOTFOUND, Message: "Only GET /metrics is served here"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// handleMetrics is the /metrics route of the API's address: the scrape, or
// 404 when it is served on its own address instead.
func (s *Server) handleMetrics() http.Handler {
	if s.cfg.MetricsElsewhere {
		return s.public(func(http.ResponseWriter, *http.Request) error {
			return &quire.Error{Code: quire.ENOTFOUND, Message: "The metrics are served on their own address (--metrics-addr)"}
		})
	}
	return s.metrics.handler(s)
}

// figures reports, at each scrape, what the services and the store count:
// sign-ins by outcome and the hashing queue (auth), the outbox (the store
// and this node's mail worker), the database's commits or pool, and the
// totals of users and documents. The store's part is read with a bound of
// two seconds; when it fails, quire_database_up is 0 and its figures are
// left out, and the scrape still answers.
type figures struct {
	store  Store
	auth   *auth.Service
	mail   *mail.Worker // nil: not reported (no worker in this process)
	now    func() time.Time
	logger *slog.Logger
}

var (
	descLogins         = prometheus.NewDesc("quire_logins_total", "Sign-ins by outcome: success; each reason a password was refused (unknown, password, disabled, not_set_up, mfa); limited (429 TOO_MANY_ATTEMPTS); locked (429 ACCOUNT_LOCKED); busy (503, no hashing slot); error.", []string{"outcome"}, nil)
	descHashWaiting    = prometheus.NewDesc("quire_password_hash_waiting", "Requests waiting now for a password hashing (argon2id) slot.", nil, nil)
	descHashWait       = prometheus.NewDesc("quire_password_hash_wait_seconds", "Time spent waiting for a password hashing slot (0 when one was free).", nil, nil)
	descHashRefused    = prometheus.NewDesc("quire_password_hash_refused_total", "Requests answered 503 because no hashing slot freed within the queue wait.", nil, nil)
	descDatabaseUp     = prometheus.NewDesc("quire_database_up", "1 when the database answered this scrape's queries, 0 when not (the figures read from it are then absent).", nil, nil)
	descUsers          = prometheus.NewDesc("quire_users", "Users, whatever their status.", nil, nil)
	descDocuments      = prometheus.NewDesc("quire_documents", "Documents outside the trash.", nil, nil)
	descOutboxPending  = prometheus.NewDesc("quire_outbox_pending", "Mails neither sent nor given up.", nil, nil)
	descOutboxAge      = prometheus.NewDesc("quire_outbox_oldest_pending_age_seconds", "Age of the oldest pending mail; 0 when none is pending.", nil, nil)
	descOutboxSent     = prometheus.NewDesc("quire_outbox_sent_total", "Mails this node's worker sent.", nil, nil)
	descOutboxRetried  = prometheus.NewDesc("quire_outbox_retried_total", "Failed attempts of this node's worker that will be tried again.", nil, nil)
	descOutboxGivenUp  = prometheus.NewDesc("quire_outbox_given_up_total", "Mails this node's worker gave up after the last attempt.", nil, nil)
	descHooksPending   = prometheus.NewDesc("quire_webhook_deliveries_pending", "Webhook deliveries neither delivered nor failed for good (the backlog).", nil, nil)
	descHooksAge       = prometheus.NewDesc("quire_webhook_oldest_pending_age_seconds", "Age of the oldest pending webhook delivery; 0 when none is pending.", nil, nil)
	descDatabaseBytes  = prometheus.NewDesc("quire_database_size_bytes", "Size of the database on disk: SQLite's file and its write-ahead log; PostgreSQL's pg_database_size.", nil, nil)
	descCommitBatch    = prometheus.NewDesc("quire_sqlite_commit_batch_size", "Write transactions committed together by SQLite's group commit.", nil, nil)
	descCommitSeconds  = prometheus.NewDesc("quire_sqlite_commit_duration_seconds", "Time of one group commit, its transactions and the fsync included.", nil, nil)
	descPoolAcquires   = prometheus.NewDesc("quire_postgres_pool_acquires_total", "Connections taken from the PostgreSQL pool.", nil, nil)
	descPoolWait       = prometheus.NewDesc("quire_postgres_pool_acquire_wait_seconds_total", "Time spent taking connections from the pool.", nil, nil)
	descPoolEmpty      = prometheus.NewDesc("quire_postgres_pool_empty_acquires_total", "Takes that found no idle connection and had to wait for one.", nil, nil)
	descPoolEmptyWait  = prometheus.NewDesc("quire_postgres_pool_empty_acquire_wait_seconds_total", "Time spent in those waits.", nil, nil)
	descPoolConns      = prometheus.NewDesc("quire_postgres_pool_connections", "Connections of the pool by state (in_use, idle).", []string{"state"}, nil)
	descPoolMax        = prometheus.NewDesc("quire_postgres_pool_max_connections", "The pool's size limit.", nil, nil)
	descIndexReady     = prometheus.NewDesc("quire_document_index_ready", "1 when the index of documents in memory is built (SQLite), 0 while it builds.", nil, nil)
	descIndexRows      = prometheus.NewDesc("quire_document_index_documents", "Documents the index holds, the trash included.", nil, nil)
	descIndexDead      = prometheus.NewDesc("quire_document_index_dead_states", "Replaced states of documents the index still holds; it is built again when they outnumber the documents.", nil, nil)
	descIndexTerms     = prometheus.NewDesc("quire_document_index_terms", "Distinct words the index holds.", nil, nil)
	descIndexPostings  = prometheus.NewDesc("quire_document_index_postings", "Word-document pairs the index holds (its size).", nil, nil)
	descIndexLists     = prometheus.NewDesc("quire_document_index_lists_total", "Searches and tag-filtered lists, by what answered them: the index, or the store's own queries (index building, behind, or turned off).", []string{"by"}, nil)
	figureDescriptions = []*prometheus.Desc{descLogins, descHashWaiting, descHashWait, descHashRefused, descDatabaseUp,
		descUsers, descDocuments, descOutboxPending, descOutboxAge, descOutboxSent, descOutboxRetried, descOutboxGivenUp,
		descHooksPending, descHooksAge, descDatabaseBytes,
		descCommitBatch, descCommitSeconds, descPoolAcquires, descPoolWait, descPoolEmpty, descPoolEmptyWait, descPoolConns, descPoolMax,
		descIndexReady, descIndexRows, descIndexDead, descIndexTerms, descIndexPostings, descIndexLists}
)

func (f *figures) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range figureDescriptions {
		ch <- d
	}
}

func (f *figures) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	histogram := func(d *prometheus.Desc, h *quire.HistogramSnapshot) {
		if h != nil {
			ch <- prometheus.MustNewConstHistogram(d, h.Count, h.Sum, h.Buckets)
		}
	}

	a := f.auth.Stats()
	for _, o := range auth.LoginOutcomes {
		counter(descLogins, float64(a.Logins[o]), o)
	}
	gauge(descHashWaiting, float64(a.HashWaiting))
	histogram(descHashWait, a.HashWait)
	counter(descHashRefused, float64(a.HashRefused))
	if f.mail != nil {
		m := f.mail.Stats()
		counter(descOutboxSent, float64(m.Sent))
		counter(descOutboxRetried, float64(m.Retried))
		counter(descOutboxGivenUp, float64(m.GivenUp))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := f.store.Stats(ctx)
	if err != nil {
		f.logger.Warn("metrics: read the database's figures", "err", err)
		gauge(descDatabaseUp, 0)
		return
	}
	gauge(descDatabaseUp, 1)
	gauge(descUsers, float64(st.Users))
	gauge(descDocuments, float64(st.Documents))
	gauge(descOutboxPending, float64(st.OutboxPending))
	age := 0.0
	if !st.OutboxOldest.IsZero() {
		age = max(0, f.now().Sub(st.OutboxOldest).Seconds())
	}
	gauge(descOutboxAge, age)
	gauge(descHooksPending, float64(st.WebhooksPending))
	hookAge := 0.0
	if !st.WebhooksOldest.IsZero() {
		hookAge = max(0, f.now().Sub(st.WebhooksOldest).Seconds())
	}
	gauge(descHooksAge, hookAge)
	gauge(descDatabaseBytes, float64(st.DatabaseBytes))
	histogram(descCommitBatch, st.CommitBatch)
	histogram(descCommitSeconds, st.CommitSeconds)
	if p := st.Pool; p != nil {
		counter(descPoolAcquires, float64(p.Acquires))
		counter(descPoolWait, p.AcquireWait.Seconds())
		counter(descPoolEmpty, float64(p.EmptyAcquires))
		counter(descPoolEmptyWait, p.EmptyAcquireWait.Seconds())
		gauge(descPoolConns, float64(p.InUse), "in_use")
		gauge(descPoolConns, float64(p.Idle), "idle")
		gauge(descPoolMax, float64(p.Max))
	}
	if x := st.Index; x != nil {
		ready := 0.0
		if x.Ready {
			ready = 1
		}
		gauge(descIndexReady, ready)
		gauge(descIndexRows, float64(x.Rows))
		gauge(descIndexDead, float64(x.DeadStates))
		gauge(descIndexTerms, float64(x.Terms))
		gauge(descIndexPostings, float64(x.Postings))
		counter(descIndexLists, float64(x.ListsByIndex), "index")
		counter(descIndexLists, float64(x.ListsByStore), "store")
	}
}
