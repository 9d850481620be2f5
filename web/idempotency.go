package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"time"

	"quire"
	"quire/idempotency"
	"quire/wire"
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
	req   *idempotency.Request // nil: the form sent no key, or keys are off
	keep  *quire.Keep          // of req's change, for the documents service's Keeping
	reply quire.Reply
	ctx   context.Context
}

// beginForm claims the key of a submitted form (parsed) for its save, whose
// success is reply, a redirect (formLocation; quire.ReplyNone for a save
// of many changes, which ends with redirected). It answers a
// repeat itself, with the redirect the first submit got, and reports
// replayed; a repeat that arrives while the first still runs waits for it
// (a few seconds at most). A form without a key saves as before.
func (s *server) beginForm(w http.ResponseWriter, r *http.Request, a quire.Actor,
	reply quire.Reply) (fs formSave, replayed bool, err error) {
	fs.ctx, fs.reply = r.Context(), reply
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
		if reply.Kind != quire.ReplyNone {
			fs.keep = req.Keep(reply)
		}
		return fs, false, nil
	}
}

// formLocation is where a form's save whose success is reply redirects, after
// the change whose result is result: the Location of its answer, rendered
// by package wire as the store renders the kept one.
func formLocation(reply quire.Reply, result any) string {
	a, err := wire.Answer(reply, result)
	if err != nil {
		return "/documents"
	}
	return a.Header["Location"]
}

// saved keeps the redirect after the change whose result is result as the
// answer of the form's key (unless the change's transaction kept it
// already).
func (fs formSave) saved(result any) {
	if fs.req != nil {
		a, err := wire.Answer(fs.reply, result)
		if err != nil {
			fs.failed()
			return
		}
		fs.req.Finish(context.WithoutCancel(fs.ctx), a)
	}
}

// redirected keeps the redirect to location as the answer of the form's
// key, for a save of many changes, kept once they are all done.
func (fs formSave) redirected(location string) {
	if fs.req != nil {
		fs.req.Finish(context.WithoutCancel(fs.ctx),
			quire.IdempotentAnswer{Status: http.StatusSeeOther, Header: map[string]string{"Location": location}})
	}
}

// failed gives the key up: the form is shown again with its errors (and a
// fresh key), and nothing was changed.
func (fs formSave) failed() {
	if fs.req != nil {
		fs.req.Release(context.WithoutCancel(fs.ctx))
	}
}
