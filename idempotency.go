package quire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"
)

// IdempotencyClaim is one request's hold on an idempotency key.
type IdempotencyClaim struct {
	UserID string
	Key    string
	// Fingerprint is the SHA-256 of the request's method, path and body:
	// the same key with another fingerprint is another request.
	Fingerprint []byte
	// Token tells this request's claim from a later one on the same key,
	// taken after this one's lease ended.
	Token string
	// KeepUntil is when the kept answer may be forgotten.
	KeepUntil time.Time
}

// IdempotentAnswer is a kept answer: what a repeat of the request gets.
type IdempotentAnswer struct {
	Status int
	// Header holds the few response headers that are part of the answer
	// (Location, ETag), by canonical name.
	Header map[string]string
	Body   []byte
}

// IdempotentWrite is the record a store writes inside the transaction of a
// change made for a request that holds an idempotency claim: Answer turns
// the change's result (the *Document or *Folder written, nil for a delete)
// into the kept answer. It is data carried with the request, not a rule:
// package idempotency decides who claims what; a store only writes it with
// the change. A write method finding the claim no longer held (its lease
// ended and another request took the key over) refuses the change with
// IDEMPOTENCY_IN_PROGRESS, so that one key never makes two changes.
type IdempotentWrite struct {
	Claim  IdempotencyClaim
	Answer func(result any) (IdempotentAnswer, error)
	// Kept is set by the store when it wrote the answer in the change's
	// transaction; a change answered as a success was committed with it.
	Kept atomic.Bool
}

type idempotentWriteKey struct{}

// WithIdempotentWrite returns ctx carrying w to the store's write
// transaction.
func WithIdempotentWrite(ctx context.Context, w *IdempotentWrite) context.Context {
	return context.WithValue(ctx, idempotentWriteKey{}, w)
}

// IdempotentWriteFrom returns the IdempotentWrite ctx carries with an
// Answer set, or nil.
func IdempotentWriteFrom(ctx context.Context) *IdempotentWrite {
	w, _ := ctx.Value(idempotentWriteKey{}).(*IdempotentWrite)
	if w == nil || w.Answer == nil {
		return nil
	}
	return w
}

// IdempotencyTakenOver is the refusal of a change whose request no longer
// holds its idempotency claim: its lease ended and a retry took the key
// over, so the retry's answer is the one that counts.
func IdempotencyTakenOver() *Error {
	return &Error{Code: EIDEMPOTENCYINPROGRESS, Message: "A request with this Idempotency-Key is in progress",
		RetryAfter: time.Second}
}

// KeptAnswer is the answer of a claim of c that found a live record with
// fingerprint, done or running (left ends its lease), holding status,
// header (JSON object) and body: the kept answer, or the refusal
// quire.IdempotencyStore names. Both stores decide through it.
func KeptAnswer(c IdempotencyClaim, fingerprint []byte, done bool, status int, header, body []byte,
	left time.Duration) (*IdempotentAnswer, error) {
	if !bytes.Equal(fingerprint, c.Fingerprint) {
		return nil, Errorf(EIDEMPOTENCYKEYREUSED, "This Idempotency-Key was used for another request")
	}
	if !done {
		e := IdempotencyTakenOver()
		e.RetryAfter = max(left, time.Second)
		return nil, e
	}
	a := &IdempotentAnswer{Status: status, Body: body}
	if err := json.Unmarshal(header, &a.Header); err != nil {
		return nil, fmt.Errorf("kept answer of an idempotency key: header: %w", err)
	}
	return a, nil
}
