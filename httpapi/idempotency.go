package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"quire"
	"quire/idempotency"
	"quire/wire"
)

// keptHeaders are the response headers that belong to a kept answer.
var keptHeaders = []string{"Location", "ETag"}

// idempotent runs fn, an unsafe route of the documents API, under the
// Idempotency-Key the request may carry (package idempotency): the first
// request with a key runs and its answer is kept; a repeat gets the kept
// answer with Idempotent-Replayed: true. Without the header fn runs as it
// is. The body is read here, within the body limit, for the fingerprint,
// and handed on to fn.
func (s *Server) idempotent(fn authedFunc) authedFunc { return s.idempotentSealed(nil, fn) }

// answerSealer seals the kept answer of a route whose answer holds a
// secret (a share's URL, with its token), so that the database keeps no
// token but its hash: the kept body is sealed, and opened for a repeat.
type answerSealer interface {
	SealAnswer(body, aad []byte) []byte
	OpenAnswer(sealed, aad []byte) ([]byte, error)
}

// idempotentSealed is idempotent with the kept answer sealed by seal (nil:
// kept as it is).
func (s *Server) idempotentSealed(seal answerSealer, fn authedFunc) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		keys := r.Header.Values(idempotency.Header)
		if len(keys) == 0 {
			return fn(w, r, a)
		}
		key, err := idempotencyKey(keys)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return errTooLarge
			}
			return errInvalidJSON("Request body could not be read")
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		return s.runIdempotent(w, r, a, key, idempotency.Fingerprint(r.Method, r.URL.RequestURI(), body), seal, fn)
	}
}

// idempotencyKey checks the Idempotency-Key headers of a request (keys,
// at least one) and returns the key. The route checks the caller's level,
// once (documents.Service.Writer): a refusal for the caller's role
// releases the key (idempotency.Request.Finish).
func idempotencyKey(keys []string) (string, error) {
	if len(keys) > 1 {
		return "", quire.Invalid(map[string]string{idempotency.Header: "must be sent once"})
	}
	if err := idempotency.CheckKey(idempotency.Header, keys[0]); err != nil {
		return "", err
	}
	return keys[0], nil
}

// runIdempotent runs fn holding key for the request whose fingerprint is
// given, or answers the kept answer of an earlier one.
func (s *Server) runIdempotent(w http.ResponseWriter, r *http.Request, a quire.Actor, key string, fingerprint []byte,
	seal answerSealer, fn authedFunc) error {
	req, kept, err := s.idem.Begin(r.Context(), a.User.ID, key, fingerprint)
	if err != nil {
		return err
	}
	aad := []byte(a.User.ID + "\x00" + key) // a sealed answer opens for its own key only
	if kept != nil {
		if seal != nil {
			body, err := seal.OpenAnswer(kept.Body, aad)
			if err != nil {
				// Sealed under another secret key (--secret-key changed
				// within the key's 24 hours).
				return fmt.Errorf("open the kept answer: %w", err)
			}
			kept.Body = body
		}
		w.Header().Set(idempotency.ReplayedHeader, "true")
		writeAnswer(w, *kept)
		return nil
	}
	buf := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
	r = r.WithContext(context.WithValue(r.Context(), keyIdempotency, req))
	if err := fn(buf, r, a); err != nil {
		s.writeError(buf, r, err)
	}
	ans := quire.IdempotentAnswer{Status: buf.status, Header: map[string]string{}, Body: buf.body.Bytes()}
	if seal != nil {
		ans.Body = seal.SealAnswer(ans.Body, aad)
	}
	for _, h := range keptHeaders {
		if v := buf.header.Get(h); v != "" {
			ans.Header[h] = v
		}
	}
	if err := req.Finish(context.WithoutCancel(r.Context()), ans); err != nil {
		// The answer stands; the key stays claimed until its lease
		// ends, and what was changed was kept with its answer.
		s.logger.Error("finish idempotency key", "request_id", requestID(r.Context()), "err", err)
	}
	for k, v := range buf.header {
		w.Header()[k] = v
	}
	if buf.status == 499 {
		w.WriteHeader(499)
		return nil
	}
	w.WriteHeader(buf.status)
	w.Write(buf.body.Bytes())
	return nil
}

// writeAnswer writes a kept answer.
func writeAnswer(w http.ResponseWriter, a quire.IdempotentAnswer) {
	for k, v := range a.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.Status)
	w.Write(a.Body)
}

// keeping returns, when the request holds an idempotency key, the
// idempotency of its change, whose success answer is reply: the store
// keeps that answer with the change. nil without a key.
func keeping(r *http.Request, reply quire.Reply) *quire.Keep {
	req, _ := r.Context().Value(keyIdempotency).(*idempotency.Request)
	if req == nil {
		return nil
	}
	return req.Keep(reply)
}

// reply writes the success answer r of a change from its result, rendered
// by package wire as the store renders the kept answer, so that a replay
// is the same bytes.
func reply(w http.ResponseWriter, r quire.Reply, result any) error {
	a, err := wire.Answer(r, result)
	if err != nil {
		return err
	}
	writeAnswer(w, a)
	return nil
}

// bufferedResponse holds fn's answer until its key is finished, so that a
// client is never told of a change whose answer is not kept.
type bufferedResponse struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }
func (b *bufferedResponse) WriteHeader(code int) {
	if !b.wrote {
		b.status, b.wrote = code, true
	}
}
func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}
