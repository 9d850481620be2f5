// Package idempotency makes retries safe (product section 17): a request
// sent with an idempotency key claims the key for its user, runs once, and
// its answer is kept for 24 hours, so that a repeat of the same request
// (after a lost answer, a proxy's resend, a double submit) gets the kept
// answer instead of running again. Every rule of it is here; the stores
// keep the records (quire.IdempotencyStore) in the database, so that every
// node of a cluster answers a repeat alike.
//
// The life of a key: Begin claims it (a record "running" until the lease
// ends, in a transaction of its own); the request runs, and the write
// transaction of its change keeps the answer with the change
// (quire.Keep, given to the store's Keeping), so a crash cannot leave one without the other;
// Finish keeps the answer of a request that changed nothing (a refusal is
// an answer too) or, after a server error, releases the key so that a
// retry runs afresh. A node that dies mid-request leaves a running record
// and no change: a retry gets IDEMPOTENCY_IN_PROGRESS until the lease
// ends, then runs.
package idempotency

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strconv"
	"time"

	"quire"
)

const (
	// DefaultLease is how long a claim holds its key while its request
	// runs: longer than the server gives a request (its write timeout is
	// 60 s), so that a live request's claim is never taken over, and
	// short enough that the claim of a request whose node died frees its
	// key within a minute and a half.
	DefaultLease = 90 * time.Second
	// TTL is how long a kept answer is kept.
	TTL = 24 * time.Hour
	// MaxKeyLen is the longest key accepted.
	MaxKeyLen = 255
	// Header is the request header that carries the key; ReplayedHeader
	// marks a kept answer.
	Header         = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
)

// Config configures a Service.
type Config struct {
	Lease time.Duration    // DefaultLease when 0
	Now   func() time.Time // time.Now when nil
}

// Service claims keys and keeps answers over a store.
type Service struct {
	store quire.IdempotencyStore
	lease time.Duration
	now   func() time.Time
}

// New returns a Service over store.
func New(store quire.IdempotencyStore, cfg Config) *Service {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{store: store, lease: cfg.Lease, now: cfg.Now}
}

// CheckKey refuses, as VALIDATION_ERROR naming field, a key that is not 1
// to 255 printable ASCII characters (space to tilde).
func CheckKey(field, key string) error {
	if len(key) < 1 || len(key) > MaxKeyLen {
		return quire.Invalid(map[string]string{field: "must be 1 to " + strconv.Itoa(MaxKeyLen) + " printable ASCII characters"})
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c > 0x7e {
			return quire.Invalid(map[string]string{field: "must be 1 to " + strconv.Itoa(MaxKeyLen) + " printable ASCII characters"})
		}
	}
	return nil
}

// Fingerprint is what tells two requests apart under one key: the SHA-256
// of the method, the path (with its query) and the body.
func Fingerprint(method, path string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)
}

// Request is a request that holds its key.
type Request struct {
	s     *Service
	claim quire.IdempotencyClaim
	keep  *quire.Keep
}

// Begin claims key for userID and a request of fingerprint (a checked key:
// CheckKey). It returns the claim, for the request to run, or the kept
// answer of an earlier run of the same request, or IDEMPOTENCY_KEY_REUSED
// (another request had the key) or IDEMPOTENCY_IN_PROGRESS with RetryAfter
// (the first run is still under way).
func (s *Service) Begin(ctx context.Context, userID, key string, fingerprint []byte) (*Request, *quire.IdempotentAnswer, error) {
	now := s.now().UTC().Truncate(time.Microsecond)
	c := quire.IdempotencyClaim{
		UserID: userID, Key: key, Fingerprint: fingerprint, Token: newToken(), KeepUntil: now.Add(TTL),
	}
	kept, err := s.store.ClaimIdempotencyKey(ctx, c, now, s.lease)
	if err != nil || kept != nil {
		return nil, kept, err
	}
	return &Request{s: s, claim: c}, nil, nil
}

// Keep returns the idempotency of the request's change, for the store
// to write its answer, reply, with the change
// (quire.IdempotencyStore.Keeping). The request makes one change.
func (r *Request) Keep(reply quire.Reply) *quire.Keep {
	r.keep = &quire.Keep{Claim: r.claim, Reply: reply}
	return r.keep
}

// Finish ends the request with its answer a. A server error (5xx), a
// request the client abandoned (499) or a refusal of the caller's role
// (403, which changed nothing and which a change of role undoes) releases
// the key, so that a retry runs: whatever it changed was undone with its
// transaction, or was kept with its answer, which a release leaves alone.
// Any other answer is kept, unless the change's transaction kept it
// already.
func (r *Request) Finish(ctx context.Context, a quire.IdempotentAnswer) error {
	if a.Status >= 500 || a.Status == 499 || a.Status == 403 {
		return r.s.store.ReleaseIdempotencyKey(ctx, r.claim)
	}
	if a.Status < 300 && r.keep.Kept() {
		return nil
	}
	return r.s.store.CompleteIdempotencyKey(ctx, r.claim, a)
}

// Prune deletes the records that ended before now, in rounds of a bounded
// size, until none is left.
func (s *Service) Prune(ctx context.Context) (int, error) {
	const round = 1000
	total := 0
	for {
		n, err := s.store.PruneIdempotencyKeys(ctx, s.now().UTC(), round)
		total += n
		if err != nil || n < round {
			return total, err
		}
	}
}

// RunPruner prunes every interval until ctx ends. A round that fails is
// logged and tried again at the next tick.
func (s *Service) RunPruner(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.Prune(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Error("prune idempotency keys", "err", err)
		} else if n > 0 {
			logger.Info("pruned idempotency keys", "deleted", n)
		}
	}
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Release gives the key up without keeping an answer, so that a repeat
// runs afresh: for an answer that cannot be replayed (a page re-rendered
// with the errors of a form) and that changed nothing.
func (r *Request) Release(ctx context.Context) error {
	return r.s.store.ReleaseIdempotencyKey(ctx, r.claim)
}
