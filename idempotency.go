package quire

import (
	"bytes"
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

// ReplyKind names the success answer of a change, which package wire
// renders from the change's result: the same bytes for the client and for
// the kept answer of its idempotency key.
type ReplyKind int

const (
	ReplyNone              ReplyKind = iota
	ReplyCreatedDocument             // 201, Location and ETag, {"document"}: the *Document created
	ReplySavedDocument               // 200, ETag, {"document"}: the *Document updated or restored
	ReplyCreatedFolder               // 201, {"folder"}: the *Folder created
	ReplySavedFolder                 // 200, {"folder"}: the *Folder updated
	ReplyCreatedAttachment           // 201, Location, {"attachment"}: the *Attachment stored
	ReplyMessage                     // 200, {"message": Reply.Message}: a delete, whose result is nil
	ReplySeeCreatedPage              // 303 to the page of the *Document created (a form of the pages)
	ReplySeeSavedPage                // 303 to the page of the *Document saved, "unchanged" at Reply.Version
)

// Reply is the success answer of a change, as data: its kind and what the
// kind needs besides the change's result.
type Reply struct {
	Kind    ReplyKind
	Message string // of ReplyMessage
	Version int    // of ReplySeeSavedPage: the version the form edited
}

// Keep is the idempotency of one change, carried to the store as a value
// (IdempotencyStore.Keeping): the claim of the request that makes it, and
// what its success answer is. The store writes that answer, rendered from
// the change's result, in the change's own transaction, so that a crash
// cannot keep one without the other. It is data, not a rule: package
// idempotency decides who claims what. A write finding the claim no
// longer held (its lease ended and another request took the key over)
// refuses the change with IDEMPOTENCY_IN_PROGRESS, so that one key never
// makes two changes.
type Keep struct {
	Claim IdempotencyClaim
	Reply Reply
	kept  atomic.Bool
}

// WithKeep returns a copy of *s whose keep (the field keep points to in
// the copy) is k, or s itself when k is nil: a service's Keeping, which
// gives a request holding an idempotency key the service its one change
// runs through.
func WithKeep[S any](s *S, k *Keep, keep func(*S) **Keep) *S {
	if k == nil {
		return s
	}
	c := *s
	*keep(&c) = k
	return &c
}

// SetKept is called by the store when it wrote the answer in the change's
// transaction.
func (k *Keep) SetKept() { k.kept.Store(true) }

// Kept reports whether the answer was written with the change: a change
// answered as a success was committed with it.
func (k *Keep) Kept() bool { return k != nil && k.kept.Load() }

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
