package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"quire"
	"quire/audit"
)

// Backoff is the wait before each retry of a delivery: the first retry
// comes 10 s after the first attempt, the last about a day after it; a
// delivery that fails len(Backoff)+1 times is given up.
var Backoff = []time.Duration{
	10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour,
}

// Defaults of the worker.
const (
	DefaultPoll      = time.Second
	DefaultTimeout   = 10 * time.Second
	DefaultRetention = 30 * 24 * time.Hour
	// maxResponse is how much of a receiver's answer is read (and
	// discarded) before the connection is closed.
	maxResponse = 64 << 10
	// batch is how many deliveries of one webhook are claimed at once, and
	// sent at once (each to a different document, so in any order).
	batch = 8
)

// Signature returns the Quire-Signature header of body sent at t with
// secret: "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>".
func Signature(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Payload is the JSON body of a delivery.
type Payload struct {
	DeliveryID string          `json:"deliveryId"`
	WebhookID  string          `json:"webhookId"`
	Attempt    int             `json:"attempt"`
	Event      audit.EventJSON `json:"event"`
}

// Worker delivers the webhook outbox. Every node runs one; the store's
// claims keep two from sending the same delivery at once. Each webhook
// has its own loop, so a receiver that is slow or down delays only its
// own deliveries, never a request (which only queued a row) nor another
// receiver.
type Worker struct {
	Store  quire.WebhookStore // the outbox of deliveries
	Logger *slog.Logger
	// AllowPrivate lets deliveries connect to private addresses.
	AllowPrivate bool
	// Poll is how often the queue is looked at when it was found empty
	// (DefaultPoll when 0); Timeout bounds one attempt (DefaultTimeout).
	Poll    time.Duration
	Timeout time.Duration
	// Retention is how long finished deliveries stay in the log
	// (DefaultRetention when 0).
	Retention time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Transport is the HTTP transport (a guarded one when nil); tests set
	// it to count connections.
	Transport http.RoundTripper

	client *http.Client
}

func (w *Worker) defaults() {
	if w.Poll <= 0 {
		w.Poll = DefaultPoll
	}
	if w.Timeout <= 0 {
		w.Timeout = DefaultTimeout
	}
	if w.Retention <= 0 {
		w.Retention = DefaultRetention
	}
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.Logger == nil {
		w.Logger = slog.New(slog.DiscardHandler)
	}
	if w.Transport == nil {
		d := &net.Dialer{Timeout: w.Timeout}
		if !w.AllowPrivate {
			d.Control = guardedControl
		}
		w.Transport = &http.Transport{
			Proxy:                 nil, // a proxy would connect where the guard cannot see
			DialContext:           d.DialContext,
			TLSHandshakeTimeout:   w.Timeout,
			ResponseHeaderTimeout: w.Timeout,
			// The answer's headers count against maxResponse too: the
			// default would read and keep up to 10 MiB of them.
			MaxResponseHeaderBytes: maxResponse,
			MaxIdleConnsPerHost:    2,
			IdleConnTimeout:        time.Minute,
		}
	}
	w.client = &http.Client{
		Transport: w.Transport,
		Timeout:   w.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // redirects are not followed
		},
	}
}

// Run delivers until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	w.defaults()
	type loop struct {
		hook   atomic.Pointer[quire.Webhook]
		cancel context.CancelFunc
	}
	loops := map[string]*loop{}
	var wg sync.WaitGroup
	defer func() {
		for _, l := range loops {
			l.cancel()
		}
		wg.Wait()
	}()
	nextPrune := w.Now()
	for {
		hooks, err := w.Store.Webhooks(ctx)
		if err != nil && ctx.Err() == nil {
			w.Logger.Warn("webhooks: list", "err", err)
		}
		if err == nil {
			seen := map[string]bool{}
			for i := range hooks {
				h := hooks[i]
				if !h.Active {
					continue
				}
				seen[h.ID] = true
				if l, ok := loops[h.ID]; ok {
					l.hook.Store(&h)
					continue
				}
				l := &loop{}
				l.hook.Store(&h)
				lctx, cancel := context.WithCancel(ctx)
				l.cancel = cancel
				loops[h.ID] = l
				wg.Go(func() { w.deliverLoop(lctx, &l.hook) })
			}
			for id, l := range loops {
				if !seen[id] {
					l.cancel()
					delete(loops, id)
				}
			}
		}
		if now := w.Now(); !now.Before(nextPrune) {
			w.prune(ctx, now)
			nextPrune = now.Add(time.Hour)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(w.Poll):
		}
	}
}

// deliverLoop delivers the queue of one webhook until ctx ends.
func (w *Worker) deliverLoop(ctx context.Context, hook *atomic.Pointer[quire.Webhook]) {
	for ctx.Err() == nil {
		h := hook.Load()
		n, err := w.deliverDue(ctx, h)
		if err != nil && ctx.Err() == nil {
			w.Logger.Warn("webhooks: claim", "webhook", h.ID, "err", err)
		}
		if n > 0 && err == nil {
			continue // more may be due
		}
		select {
		case <-ctx.Done():
		case <-time.After(w.Poll):
		}
	}
}

// deliverDue claims the due deliveries of h once and sends them; it
// returns how many it claimed.
func (w *Worker) deliverDue(ctx context.Context, h *quire.Webhook) (int, error) {
	// The lease outlives an attempt: a delivery is claimed again only when
	// the worker that held it is gone.
	ds, err := w.Store.ClaimDeliveries(ctx, h.ID, w.Now(), 3*w.Timeout, batch)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for i := range ds {
		wg.Go(func() { w.deliver(ctx, h, &ds[i]) })
	}
	wg.Wait()
	return len(ds), nil
}

// deliver makes one attempt and records its outcome.
func (w *Worker) deliver(ctx context.Context, h *quire.Webhook, d *quire.WebhookDelivery) {
	// The outcome is recorded even when ctx ends during the attempt.
	record := context.WithoutCancel(ctx)
	if d.Event == nil {
		if err := w.Store.DeliveryFailed(record, d.ID, 0, "the event is no longer in the audit log", time.Time{}); err != nil {
			w.Logger.Warn("webhooks: record", "delivery", d.ID, "err", err)
		}
		return
	}
	status, err := w.send(ctx, h, d)
	if ctx.Err() != nil {
		return // shutting down: the lease ends and another attempt follows
	}
	if err == nil {
		if err := w.Store.DeliverySucceeded(record, d.ID, w.Now(), status); err != nil {
			w.Logger.Warn("webhooks: record", "delivery", d.ID, "err", err)
		}
		return
	}
	var next time.Time
	if d.Attempts <= len(Backoff) {
		next = w.Now().Add(Backoff[d.Attempts-1])
	}
	w.Logger.Info("webhooks: attempt failed", "webhook", h.ID, "delivery", d.ID, "attempt", d.Attempts,
		"status", status, "err", err, "given_up", next.IsZero())
	if err := w.Store.DeliveryFailed(record, d.ID, status, err.Error(), next); err != nil {
		w.Logger.Warn("webhooks: record", "delivery", d.ID, "err", err)
	}
}

// send posts d to h and returns the receiver's status; an error for
// anything but a 2xx answer.
func (w *Worker) send(ctx context.Context, h *quire.Webhook, d *quire.WebhookDelivery) (int, error) {
	body, err := json.Marshal(Payload{DeliveryID: d.ID, WebhookID: h.ID, Attempt: d.Attempts, Event: audit.JSON(d.Event)})
	if err != nil {
		return 0, fmt.Errorf("encode: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "quire-webhooks/1")
	req.Header.Set("Quire-Event", d.Action)
	req.Header.Set("Quire-Delivery", d.ID)
	req.Header.Set("Quire-Signature", Signature(h.Secret, w.Now(), body))
	resp, err := w.client.Do(req)
	if err != nil {
		if errors.Is(err, errPrivate) {
			return 0, errPrivate
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return 0, errors.New("no answer within " + w.Timeout.String())
		}
		return 0, errors.New("could not connect: " + shortErr(err))
	}
	// Read a bounded part of the answer so that the connection can be
	// reused, and drop the rest with it.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp.StatusCode, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return resp.StatusCode, fmt.Errorf("answered %d: redirects are not followed", resp.StatusCode)
	default:
		return resp.StatusCode, fmt.Errorf("answered %d", resp.StatusCode)
	}
}

// shortErr is err's innermost message, bounded: what the delivery log
// shows.
func shortErr(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			break
		}
		err = u
	}
	return truncate(err.Error(), 200)
}

func (w *Worker) prune(ctx context.Context, now time.Time) {
	for ctx.Err() == nil {
		n, err := w.Store.PruneDeliveries(ctx, now.Add(-w.Retention), 1000)
		if err != nil {
			if ctx.Err() == nil {
				w.Logger.Warn("webhooks: prune", "err", err)
			}
			return
		}
		if n < 1000 {
			return
		}
	}
}
