package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"time"

	"quire"
	"quire/idempotency"
)

// formKeyField is the hidden field that carries a form view's idempotency
// key: a form cannot send headers, so the page renders a fresh key into
// every create and edit form, and a double submit or a resent form sends
// the same one again.
const formKeyField = "idempotency_key"

// newFormKey returns a fresh key for a form view: 128 random bits.
func newFormKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// formSave is the save of a submitted form under its key.
type formSave struct {
	req *idempotency.Request // nil: the form sent no key, or keys are off
	ctx context.Context
}

// beginForm claims the key of a submitted form (parsed) for its save, whose
// success is a redirect to location(result of the change). It answers a
// repeat itself, with the redirect the first submit got, and reports
// replayed; a repeat that arrives while the first still runs waits for it
// (a few seconds at most). A form without a key saves as before.
func (s *server) beginForm(w http.ResponseWriter, r *http.Request, a quire.Actor,
	location func(result any) string) (fs formSave, replayed bool, err error) {
	fs.ctx = r.Context()
	key := r.PostForm.Get(formKeyField)
	if s.cfg.Keys == nil || key == "" {
		return fs, false, nil
	}
	if err := idempotency.CheckKey(formKeyField, key); err != nil {
		return fs, false, err
	}
	fp := idempotency.Fingerprint(r.Method, r.URL.Path, []byte(r.PostForm.Encode()))
	for tries := 0; ; tries++ {
		req, kept, err := s.cfg.Keys.Begin(r.Context(), a.User.ID, key, fp)
		if quire.ErrorCode(err) == quire.EIDEMPOTENCYINPROGRESS && tries < 40 {
			select {
			case <-r.Context().Done():
				return fs, false, r.Context().Err()
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return fs, false, err
		}
		if kept != nil {
			http.Redirect(w, r, kept.Header["Location"], http.StatusSeeOther)
			return fs, true, nil
		}
		fs.req = req
		fs.ctx = req.Write(r.Context(), func(result any) (quire.IdempotentAnswer, error) {
			return redirectAnswer(location(result)), nil
		})
		return fs, false, nil
	}
}

func redirectAnswer(location string) quire.IdempotentAnswer {
	return quire.IdempotentAnswer{Status: http.StatusSeeOther, Header: map[string]string{"Location": location}}
}

// saved keeps the redirect to location as the answer of the form's key
// (unless the change's transaction kept it already).
func (fs formSave) saved(location string) {
	if fs.req != nil {
		fs.req.Finish(context.WithoutCancel(fs.ctx), redirectAnswer(location))
	}
}

// failed gives the key up: the form is shown again with its errors (and a
// fresh key), and nothing was changed.
func (fs formSave) failed() {
	if fs.req != nil {
		fs.req.Release(context.WithoutCancel(fs.ctx))
	}
}
