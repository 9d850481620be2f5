package mail

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"quire"
)

// Worker delivers the outbox. Any number of workers, in one process or in
// several on one database, may run at once: each mail is claimed with a
// lease, so two workers never hold the same mail.
type Worker struct {
	outbox      quire.Outbox
	sender      Sender
	logger      *slog.Logger
	now         func() time.Time
	poll        time.Duration
	lease       time.Duration
	minBackoff  time.Duration
	maxBackoff  time.Duration
	maxAttempts int
	// sent, retried and givenUp count this worker's deliveries (Stats).
	sent, retried, givenUp atomic.Uint64
}

// Stats are the counts of a worker's deliveries since it was made: mails
// sent, attempts that failed and will be tried again, mails given up.
type Stats struct{ Sent, Retried, GivenUp uint64 }

// Stats reads the worker's counts.
func (w *Worker) Stats() Stats {
	return Stats{Sent: w.sent.Load(), Retried: w.retried.Load(), GivenUp: w.givenUp.Load()}
}

// Option configures a Worker.
type Option func(*Worker)

// WithPollInterval sets how often an idle worker looks for due mail
// (default 1s).
func WithPollInterval(d time.Duration) Option { return func(w *Worker) { w.poll = d } }

// WithBackoff sets the wait after the first failed attempt, doubled after
// each further one up to max (defaults 30s and 30m).
func WithBackoff(min, max time.Duration) Option {
	return func(w *Worker) { w.minBackoff, w.maxBackoff = min, max }
}

// WithMaxAttempts sets after how many failed attempts a mail is given up
// (default 20: about eight hours of retries with the default back-off).
func WithMaxAttempts(n int) Option { return func(w *Worker) { w.maxAttempts = n } }

// WithLease sets how long a claimed mail stays hidden from other workers
// (default 5m). It must exceed the SMTP timeout (30s), or a slow server
// could see the same mail from two workers.
func WithLease(d time.Duration) Option { return func(w *Worker) { w.lease = d } }

// WithClock sets the worker's clock (default time.Now).
func WithClock(now func() time.Time) Option { return func(w *Worker) { w.now = now } }

// NewWorker returns a worker that delivers outbox's mail through sender.
func NewWorker(outbox quire.Outbox, sender Sender, logger *slog.Logger, opts ...Option) *Worker {
	w := &Worker{
		outbox:      outbox,
		sender:      sender,
		logger:      logger,
		now:         time.Now,
		poll:        time.Second,
		lease:       5 * time.Minute,
		minBackoff:  30 * time.Second,
		maxBackoff:  30 * time.Minute,
		maxAttempts: 20,
	}
	for _, opt := range opts {
		opt(w)
	}
	return w
}

// Run delivers due mail until ctx is done, then returns nil once the mail
// in hand (if any) is delivered or its failure recorded. Mail is claimed
// one at a time, so a stopped worker leaves nothing leased behind it.
func (w *Worker) Run(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for ctx.Err() == nil {
			more, err := w.deliverOne(ctx)
			if err != nil {
				w.logger.Error("mail outbox", "err", err)
				break
			}
			if !more {
				break
			}
		}
		t.Reset(w.poll)
	}
}

// deliverOne claims one due mail and tries it. It reports whether a mail
// was claimed. The claim and what follows run without ctx's cancellation:
// a mail once claimed is always tried and its outcome recorded.
func (w *Worker) deliverOne(ctx context.Context) (bool, error) {
	ctx = context.WithoutCancel(ctx)
	mails, err := w.outbox.ClaimMail(ctx, w.now().UTC(), w.lease, 1)
	if err != nil || len(mails) == 0 {
		return false, err
	}
	m := mails[0]
	sendCtx, cancel := context.WithTimeout(ctx, sendTimeout)
	err = w.sender.Send(sendCtx, m)
	cancel()
	if err == nil {
		w.logger.Info("mail sent", "mail", m.ID, "to", m.To, "subject", m.Subject, "attempt", m.Attempts)
		if err := w.outbox.MailSent(ctx, m.ID, w.now().UTC()); err != nil {
			return true, err
		}
		w.sent.Add(1) // once recorded: the outbox and the count agree
		return true, nil
	}
	reason := err.Error()
	if len(reason) > 1000 {
		reason = reason[:1000]
	}
	if m.Attempts >= w.maxAttempts {
		w.logger.Error("mail given up", "mail", m.ID, "to", m.To, "subject", m.Subject, "attempt", m.Attempts, "err", reason)
		if err := w.outbox.MailFailed(ctx, m.ID, reason, time.Time{}); err != nil {
			return true, err
		}
		w.givenUp.Add(1)
		return true, nil
	}
	next := w.now().UTC().Add(w.backoff(m.Attempts))
	w.logger.Warn("mail not sent, will retry", "mail", m.ID, "to", m.To, "attempt", m.Attempts, "next", next, "err", reason)
	if err := w.outbox.MailFailed(ctx, m.ID, reason, next); err != nil {
		return true, err
	}
	w.retried.Add(1)
	return true, nil
}

// backoff is the wait after the given failed attempt (1 for the first):
// doubling from minBackoff, capped at maxBackoff, and jittered down by up to
// a quarter so that mails that failed together do not retry together.
func (w *Worker) backoff(attempt int) time.Duration {
	d := w.minBackoff
	for i := 1; i < attempt && d < w.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, w.maxBackoff)
	if q := int64(d / 4); q > 0 {
		d -= time.Duration(rand.Int64N(q))
	}
	return d
}
