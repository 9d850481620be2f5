package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire"
	"quire/attachments"
	"quire/audit"
	"quire/auth"
	"quire/comments"
	"quire/documents"
	"quire/httpapi"
	"quire/idempotency"
	"quire/live"
	"quire/live/wake"
	"quire/mail"
	"quire/mfa"
	"quire/notify"
	"quire/passkey"
	"quire/secretkey"
	"quire/share"
	"quire/transfer"
	"quire/web"
	"quire/webhook"
)

// serveConfig is everything `quire serve` is told.
type serveConfig struct {
	addr, db, publicURL, smtpURL, mailFrom string
	trustedProxies                         string
	tlsCert, tlsKey                        string
	demo, webhooksAllowPrivate             bool
	logLevel                               string

	loginLimit, lockThreshold, minPasswordLength int
	loginWindow, lockDuration                    time.Duration
	tokenTTL, tokenIdle, resetTTL, inviteTTL     time.Duration
	maxBody                                      byteSize
	maxUpload                                    byteSize
	trashRetention                               time.Duration
	auditRetention                               time.Duration
	idempotencyLease                             time.Duration

	// metricsAddr serves /metrics on an address of its own (and takes it
	// off addr); metricsToken is the bearer token a scrape must carry.
	metricsAddr, metricsToken string

	oidc      oidcConfig // sso.go
	secretKey string     // seals the TOTP secrets (package secretkey)

	// memoryLimit is the Go runtime's soft memory limit as given ("auto"
	// or "": derived from the live heap, memlimit.go; "0": none set
	// here), memLimit its bytes (-1 for auto).
	memoryLimit string
	memLimit    int64
}

// byteSize is a flag value such as 2MiB, 512KiB or 1048576.
type byteSize int64

// String writes the size in the largest binary unit that divides it
// (2MiB), as --max-body is given and documented.
func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return errors.New("must be a positive size such as 2MiB")
	}
	*b = byteSize(n * mult)
	return nil
}

func serveFlags() (*command, *serveConfig, []string) {
	c := newCommand("serve", "quire serve [flags]")
	cfg := &serveConfig{maxBody: 2 << 20, maxUpload: attachments.DefaultMaxUpload}
	d := auth.DefaultConfig()
	f := &envFlags{fs: c.fs}
	str, dur, num := f.str, f.dur, f.num
	str(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	str(&cfg.db, "db", "./quire.db", "SQLite file path or postgres:// URL")
	str(&cfg.publicURL, "public-url", "", "URL at which users reach quire, the base of mailed links: a scheme and a host, no path (quire runs at the root of its host); http://ADDR when empty")
	str(&cfg.smtpURL, "smtp-url", "", "smtp://user:pass@host:port (STARTTLS when offered) or smtps://...; empty: mail goes to the log and to <data dir>/outbox/")
	str(&cfg.mailFrom, "mail-from", "quire <quire@localhost>", "From address of mails")
	str(&cfg.trustedProxies, "trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed")
	str(&cfg.tlsCert, "tls-cert", "", "TLS certificate file (with --tls-key)")
	str(&cfg.tlsKey, "tls-key", "", "TLS key file (with --tls-cert)")
	str(&cfg.logLevel, "log-level", "info", "debug, info, warn or error")
	f.boolean(&cfg.demo, "demo", false, "load sample data into an empty database and print the demo accounts")
	num(&cfg.loginLimit, "login-limit", d.Limits.Limit, "failed sign-ins per address and email in the window")
	dur(&cfg.loginWindow, "login-window", d.Limits.Window, "sliding window of the login limit")
	num(&cfg.lockThreshold, "lock-threshold", d.Limits.LockThreshold, "consecutive failed sign-ins that lock an email")
	dur(&cfg.lockDuration, "lock-duration", d.Limits.LockDuration, "how long a lock lasts")
	dur(&cfg.tokenTTL, "token-ttl", d.TokenTTL, "absolute lifetime of a session")
	dur(&cfg.tokenIdle, "token-idle", d.TokenIdle, "idle timeout of a session")
	dur(&cfg.resetTTL, "reset-ttl", d.ResetTTL, "lifetime of a password reset link")
	dur(&cfg.inviteTTL, "invite-ttl", d.InviteTTL, "lifetime of an invitation link")
	num(&cfg.minPasswordLength, "min-password-length", d.MinPasswordLength, "minimum password length (not below 8)")
	dur(&cfg.idempotencyLease, "idempotency-lease", idempotency.DefaultLease, "how long a running request holds its Idempotency-Key; a node that dies mid-request frees it after this")
	f.value(&cfg.maxBody, "max-body", "request body limit, a `size` in bytes or with a unit: 2MiB, 512KiB, 1GB")
	f.value(&cfg.maxUpload, "max-upload", "largest file a document may be given, a `size` as --max-body; uploads are exempt from --max-body")
	dur(&cfg.trashRetention, "trash-retention", defaultTrashRetention, "how long a deleted document stays in the trash before it is deleted for good (0 keeps it forever); the purge runs every tenth of it, at most every second, at least every hour")
	dur(&cfg.auditRetention, "audit-retention", defaultAuditRetention, "how long an event stays in the audit log (0 keeps every event); the prune runs every tenth of it, at most every second, at least every hour")
	str(&cfg.secretKey, "secret-key", "", "key that seals the TOTP secrets (any long random string); empty: one generated at the first start and kept in the database")
	str(&cfg.metricsAddr, "metrics-addr", "", "serve GET /metrics on this host:port alone (a monitoring network) and not on --addr")
	str(&cfg.metricsToken, "metrics-token", "", "bearer token a scrape of /metrics must carry (16 characters or more); empty: none")
	str(&cfg.memoryLimit, "memory-limit", "auto", "soft limit of the memory the Go runtime holds (its heap, stacks and own structures), a `size` as --max-body: near it the collector runs more often rather than let the heap double; auto: twice the heap found live by the last collections (at least that heap plus 32MiB), the runtime's own memory and, while passwords are hashed, 20MiB for a hash, followed as the heap grows, unless GOMEMLIMIT is set; 0: none (GOMEMLIMIT applies when set). The postings of the index of documents and SQLite's caches are outside it")
	f.boolean(&cfg.webhooksAllowPrivate, "webhooks-allow-private", false,
		"let webhooks call loopback, private and link-local addresses")
	cfg.oidc.register(f)
	return c, cfg, f.names
}

// validate checks the configuration and fills what derives from it.
func (cfg *serveConfig) validate() (httpapi.Config, auth.Config, error) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if _, _, err := net.SplitHostPort(cfg.addr); err != nil {
		bad("--addr %q is not host:port", cfg.addr)
	}
	if cfg.publicURL == "" {
		scheme := "http"
		if cfg.tlsCert != "" {
			scheme = "https"
		}
		cfg.publicURL = scheme + "://" + cfg.addr
	}
	if problem := checkPublicURL(cfg.publicURL); problem != "" {
		bad("%s", problem)
	}
	pu, _ := url.Parse(cfg.publicURL)
	if pu == nil {
		pu = &url.URL{}
	}
	var proxies []netip.Prefix
	for _, p := range strings.Split(cfg.trustedProxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !strings.Contains(p, "/") {
			if a, err := netip.ParseAddr(p); err == nil {
				proxies = append(proxies, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
		}
		pr, err := netip.ParsePrefix(p)
		if err != nil {
			bad("--trusted-proxies: %q is not a CIDR", p)
			continue
		}
		proxies = append(proxies, pr.Masked())
	}
	if cfg.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(cfg.metricsAddr); err != nil {
			bad("--metrics-addr %q is not host:port", cfg.metricsAddr)
		} else if cfg.metricsAddr == cfg.addr && !strings.HasSuffix(cfg.addr, ":0") {
			bad("--metrics-addr must differ from --addr (without it /metrics is served on --addr)")
		}
	}
	if cfg.metricsToken != "" && len(cfg.metricsToken) < 16 {
		bad("--metrics-token must have 16 characters or more")
	}
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		bad("--tls-cert and --tls-key go together")
	}
	if cfg.smtpURL != "" {
		if u, err := url.Parse(cfg.smtpURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
			bad("--smtp-url must be smtp://host:port or smtps://host:port")
		}
	}
	if cfg.loginLimit < 1 {
		bad("--login-limit must be at least 1")
	}
	if cfg.lockThreshold < 1 {
		bad("--lock-threshold must be at least 1")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"login-window", cfg.loginWindow}, {"lock-duration", cfg.lockDuration}, {"token-ttl", cfg.tokenTTL},
		{"token-idle", cfg.tokenIdle}, {"reset-ttl", cfg.resetTTL}, {"invite-ttl", cfg.inviteTTL},
		{"idempotency-lease", cfg.idempotencyLease}} {
		if d.v <= 0 {
			bad("--%s must be a positive duration", d.name)
		}
	}
	if cfg.tokenIdle > cfg.tokenTTL {
		bad("--token-idle (%s) must not be longer than --token-ttl (%s): a session ends at --token-ttl however it is used",
			shortDuration(cfg.tokenIdle.String()), shortDuration(cfg.tokenTTL.String()))
	}
	if cfg.trashRetention < 0 {
		bad("--trash-retention must be 0 (keep forever) or a positive duration")
	}
	if cfg.auditRetention < 0 {
		bad("--audit-retention must be 0 (keep every event) or a positive duration")
	}
	if cfg.minPasswordLength < 8 || cfg.minPasswordLength > 128 {
		bad("--min-password-length must be between 8 and 128")
	}
	switch v := cfg.memoryLimit; v {
	case "auto", "":
		cfg.memLimit = -1
	case "0":
	default:
		var b byteSize
		if err := b.Set(v); err != nil || b < 16<<20 {
			bad("--memory-limit must be auto, a size of 16MiB or more, such as 128MiB, or 0 for none")
		}
		cfg.memLimit = int64(b)
	}
	if _, ok := logLevels[cfg.logLevel]; !ok {
		bad("--log-level must be debug, info, warn or error")
	}
	cfg.oidc.validate(bad)
	if len(problems) > 0 {
		return httpapi.Config{}, auth.Config{}, errors.New("invalid configuration: " + strings.Join(problems, "; "))
	}
	ac := auth.Config{
		Limits: quire.LoginLimits{
			Limit: cfg.loginLimit, Window: cfg.loginWindow,
			LockThreshold: cfg.lockThreshold, LockDuration: cfg.lockDuration,
		},
		TokenTTL: cfg.tokenTTL, TokenIdle: cfg.tokenIdle, ResetTTL: cfg.resetTTL, InviteTTL: cfg.inviteTTL,
		MinPasswordLength: cfg.minPasswordLength,
		PublicURL:         strings.TrimRight(cfg.publicURL, "/"),
	}
	ac.PasswordAdminsOnly = cfg.oidc.only
	hc := httpapi.Config{MaxBody: int64(cfg.maxBody), TrustedProxies: proxies, SecureCookies: pu.Scheme == "https"}
	hc.MetricsToken, hc.MetricsElsewhere = cfg.metricsToken, cfg.metricsAddr != ""
	return hc, ac, nil
}

var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// dataDir is where local files (the outbox of unsent-by-SMTP mail) go: beside
// the SQLite file, or the working directory for PostgreSQL.
func dataDir(db string) string {
	if isPostgres(db) {
		return "."
	}
	return filepath.Dir(strings.TrimPrefix(db, "sqlite:"))
}

func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, cfg, names := serveFlags()
	pos, err := c.parse(args, getenv, stdout, names...)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("serve: unexpected argument %q", pos[0])
	}
	hc, ac, err := cfg.validate()
	if err != nil {
		return err
	}
	logBuf := newLineBuffer(stderr)
	defer logBuf.Close()
	logger := slog.New(flushingHandler{slog.NewJSONHandler(logBuf, &slog.HandlerOptions{Level: logLevels[cfg.logLevel]}), logBuf})
	if cfg.memLimit > 0 {
		debug.SetMemoryLimit(cfg.memLimit)
	}

	if !isPostgres(cfg.db) {
		path, err := sqlitePath(cfg.db, false)
		if err != nil {
			return err
		}
		unlock, err := lockServe(resolvePath(path))
		if err != nil {
			return err
		}
		defer unlock()
	}
	store, err := openStore(ctx, cfg.db, false)
	if err != nil {
		return err
	}
	defer store.Close()
	if names := migrated(store); len(names) > 0 {
		logger.Info("applied migrations", "migrations", names)
	} else {
		logger.Info("database schema is up to date")
	}
	if ix, ok := store.(quire.SearchIndexer); ok {
		ix.StartSearchIndex()
	}
	// The secret key seals the second factors' secrets: the one given, or
	// one generated at the first start and kept in the database, which
	// every node then shares.
	key, src, err := secretkey.Load(ctx, store, cfg.secretKey)
	if err != nil {
		return err
	}
	if src == secretkey.Generated {
		logger.Info("generated a secret key and stored it in the database; --secret-key (QUIRE_SECRET_KEY) kept outside it is stronger")
	}
	// The composition root: every service is built here, once, and the
	// API and the pages are given the same ones (one limit of imports at
	// once, one configuration of uploads, one clock).
	ac.MFA = mfa.New(store, mfa.Config{Key: key, Now: ac.Now})
	as, err := auth.New(store, ac, logger)
	if err != nil {
		return err
	}
	if cfg.memLimit < 0 && getenv("GOMEMLIMIT") == "" {
		// The default limit follows the live heap, and leaves room for a
		// password hash while they are made (memlimit.go).
		defer startMemGovernor(func() uint64 { return as.Stats().HashWait.Count })()
	}
	ds := documents.New(store, documents.Config{})
	if err := bootstrap(ctx, store, as, cfg.demo, stdout); err != nil {
		return err
	}
	// The admin commands run on this database build the links they mail
	// from it (quire user invite), so that every mail links where this
	// server's users reach it.
	if err := store.SetSetting(ctx, quire.SettingPublicURL, ac.PublicURL); err != nil {
		return fmt.Errorf("record the public URL: %w", err)
	}
	now := as.Config().Now
	auditLog := audit.New(store, now)
	idem := idempotency.New(store, idempotency.Config{Lease: cfg.idempotencyLease, Now: now})
	files := attachments.New(store, attachments.Config{MaxUpload: int64(cfg.maxUpload), Now: now})
	hooks := webhook.New(store, webhook.Config{AllowPrivate: cfg.webhooksAllowPrivate, Now: now})
	xfer := transfer.New(ds, files, ac.PublicURL)
	shares := share.New(store, ds, share.Config{Key: key, PublicURL: ac.PublicURL, Now: now})
	// Passkey ceremonies are rows of the store, so every node shares them.
	passkeys := passkey.New(store, as, logger)
	notes := comments.New(store, comments.Config{Now: now})
	notices := notify.New(store, notify.Config{Now: now, Key: key.Derive("notification unsubscribe"), PublicURL: ac.PublicURL})
	ssoService, err := cfg.oidc.service(ctx, store, as, ac.PublicURL, logger)
	if err != nil {
		return err
	}

	sender, err := mail.NewSender(cfg.smtpURL, cfg.mailFrom, filepath.Join(dataDir(cfg.db), "outbox"), logger)
	if err != nil {
		return err
	}
	workerCtx, stopWorker := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	worker := mail.NewWorker(store, sender, logger)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := worker.Run(workerCtx); err != nil && !errors.Is(err, context.Canceled) {
			logger.Error("mail worker stopped", "err", err)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		purgeTrash(workerCtx, ds, cfg.trashRetention, logger)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		pruneAudit(workerCtx, auditLog, cfg.auditRetention, logger)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Every node runs the pruner; on PostgreSQL one prunes at a time
		// (an advisory lock) and the others find the work taken.
		idem.RunPruner(workerCtx, idempotencyPruneEvery, logger)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Every node delivers; the store's claims keep two from sending
		// one delivery at once.
		hooks := &webhook.Worker{Store: store, Logger: logger, AllowPrivate: cfg.webhooksAllowPrivate}
		if err := hooks.Run(workerCtx); err != nil && !errors.Is(err, context.Canceled) {
			logger.Error("webhook worker stopped", "err", err)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Views of share pages are counted in memory and written in
		// batches, and once more at shutdown.
		shares.RunViews(workerCtx, shareViewsEvery, logger)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Every node fans out; the store's claim gives each queued event
		// to one of them.
		if err := notices.Run(workerCtx, time.Second, logger); err != nil && !errors.Is(err, context.Canceled) {
			logger.Error("notifications worker stopped", "err", err)
		}
	}()
	// Live editing (package live): on PostgreSQL the nodes wake each other
	// through the database (LISTEN/NOTIFY, a connection of its own); on
	// SQLite this process is alone and fans out by itself.
	waker := wake.Local()
	if bus, ok := store.(wake.Bus); ok {
		waker = wake.New(bus, logger)
		wg.Go(func() { waker.Run(workerCtx) })
	}
	liveEdits := live.New(store, ds, live.Config{Now: now, MaxText: int(cfg.maxBody), Waker: waker}, logger)
	defer func() {
		stopWorker()
		wg.Wait()
	}()

	wc := web.Config{SecureCookies: hc.SecureCookies, TrustedProxies: hc.TrustedProxies, MaxBody: hc.MaxBody,
		Keys: idem, Audit: auditLog, Webhooks: hooks, Transfer: xfer, Passkeys: passkeys, Files: files, SSO: ssoService,
		Shares: shares, Comments: notes, OpenThreads: store, Notify: notices, Shutdown: ctx.Done(),
		Live: liveEdits}
	// Both engines' stores answer the pages' Watch buttons (notifysql's
	// WatchState, which quire.Store does not name).
	if ws, ok := store.(web.WatchStates); ok {
		wc.Watches = ws
	}
	pages, err := web.New(wc, as, ds, logger)
	if err != nil {
		return err
	}
	api := httpapi.New(hc, store, httpapi.Services{Auth: as, Documents: ds, Audit: auditLog, Idempotency: idem,
		Attachments: files, Webhooks: hooks, Transfer: xfer, Passkeys: passkeys, Comments: notes, Notify: notices, Mail: worker, Shares: shares,
		Live: liveEdits}, logger)

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	var mln net.Listener
	if cfg.metricsAddr != "" {
		if mln, err = net.Listen("tcp", cfg.metricsAddr); err != nil {
			ln.Close()
			return fmt.Errorf("listen on --metrics-addr: %w", err)
		}
		defer mln.Close()
	}
	srv := &http.Server{
		Handler:           api.Front(httpapi.Routes(api.API(), pages)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	if cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("load TLS key pair: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
		scheme = "https"
	}
	// The metrics address first: "quire listening" is the last line of a
	// start, which scripts (and the tests) wait for.
	if mln != nil {
		fmt.Fprintf(stdout, "quire metrics on http://%s/metrics\n", mln.Addr())
		logger.Info("metrics listening", "addr", mln.Addr().String())
	}
	fmt.Fprintf(stdout, "quire listening on %s://%s\n", scheme, ln.Addr())
	logger.Info("listening", "addr", ln.Addr().String(), "db", redactDSN(cfg.db), "public_url", cfg.publicURL)

	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if mln != nil {
		msrv := &http.Server{Handler: api.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 16 << 10,
			ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
		go func() { errc <- msrv.Serve(mln) }()
		defer msrv.Close()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// Live connections are hijacked: Shutdown does not wait for them. They
	// are closed with 1001 and their texts saved first.
	liveEdits.Shutdown(shutCtx)
	if err := srv.Shutdown(shutCtx); err != nil {
		logger.Warn("shutdown: requests still in flight were cut", "err", err)
	}
	return nil
}

// shareViewsEvery is how often a node writes the views of share pages it
// counted.
const shareViewsEvery = 5 * time.Second

// idempotencyPruneEvery is how often a node deletes the ended records of
// idempotency keys.
const idempotencyPruneEvery = 10 * time.Minute

// redactDSN hides a password in a database URL before it is logged.
func redactDSN(dsn string) string {
	if !isPostgres(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparsable)"
	}
	return u.Redacted()
}

// bootstrap creates the first administrator of an empty database and
// prints its password once; with demo it also loads the sample data.
func bootstrap(ctx context.Context, store quire.Store, as *auth.Service, demo bool, stdout io.Writer) error {
	n, err := store.CountUsers(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		if demo {
			fmt.Fprintln(stdout, "The database is not empty: demo data not loaded.")
		}
		return nil
	}
	password := generatePassword()
	if _, _, err := as.CreateUser(ctx, auth.NewUser{
		Email: "admin@localhost", Name: "Administrator", Role: "admin", Password: password,
		MustChangePassword: true,
	}); err != nil {
		return fmt.Errorf("create the first administrator: %w", err)
	}
	fmt.Fprintf(stdout, "Created the first administrator.\n  email:    admin@localhost\n  password: %s\nIt is shown only this once.\n", password)
	if demo {
		return loadDemo(ctx, store, as, stdout)
	}
	return nil
}

// generatePassword returns 24 random bytes in URL-safe base64: 32 characters.
func generatePassword() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
