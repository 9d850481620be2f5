package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"quire"
	"quire/share"
)

// The Share dialog of a document's page and the Shares section of the
// Administration area (product.md section 21), over the same share
// service as the API. Plain forms: creating, revoking and the switch work
// without JavaScript; app.js only adds the Copy buttons.

func init() {
	for k, v := range map[string]string{
		"share-created": "Share link created: copy it below and send it to whoever should read this page.",
		"share-revoked": "Share link revoked: it no longer opens anything.",
		"sharing-on":    "Sharing is on: share links work again.",
		"sharing-off":   "Sharing is off: every share link answers “not found” until it is switched on again.",
	} {
		flashes[k] = v
	}
}

var errShareExpiry = quire.Errorf(quire.EVALIDATION, "The expiry must be a date after today.")

func (s *server) shareRoutes() {
	sh := s.cfg.Shares
	if sh == nil {
		return
	}
	m := s.mux
	m.Handle("POST /documents/{id}/shares", s.signedIn(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := writeForm(r, a); err != nil {
			return err
		}
		id := r.PathValue("id")
		expires, err := expiryOf(r.PostForm.Get("expires"), s.layout(r, &a, "").Loc)
		if err != nil {
			return err
		}
		if _, err := sh.Create(r.Context(), a, id, expires); err != nil {
			if quire.ErrorCode(err) == quire.EVALIDATION {
				return errShareExpiry
			}
			return err
		}
		http.Redirect(w, r, "/documents/"+id+"?m=share-created#shares", http.StatusSeeOther)
		return nil
	}))
	m.Handle("POST /documents/{id}/shares/{share}/revoke", s.signedIn(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := sh.Revoke(r.Context(), a, r.PathValue("share")); err != nil {
			return err
		}
		http.Redirect(w, r, "/documents/"+r.PathValue("id")+"?m=share-revoked#shares", http.StatusSeeOther)
		return nil
	}))
	m.Handle("GET /admin/shares", s.admin(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page < 1 || page > 1_000_000 {
			page = 1
		}
		list, err := sh.All(r.Context(), a, page, share.DefaultLimit)
		if err != nil {
			return err
		}
		on, err := sh.Sharing(r.Context())
		if err != nil {
			return err
		}
		p := adminSharesPage{layout: s.section(r, &a, "admin", "Shares"), Section: "shares", List: list, Sharing: on}
		return s.show(w, r, http.StatusOK, "admin_shares.html", p)
	}))
	m.Handle("POST /admin/shares/settings", s.admin(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		on := r.PostForm.Get("sharing") == "on"
		if _, err := sh.SetSharing(r.Context(), a, on); err != nil {
			return err
		}
		flash := "sharing-off"
		if on {
			flash = "sharing-on"
		}
		http.Redirect(w, r, "/admin/shares?m="+flash, http.StatusSeeOther)
		return nil
	}))
	m.Handle("POST /admin/shares/{share}/revoke", s.admin(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := sh.Revoke(r.Context(), a, r.PathValue("share")); err != nil {
			return err
		}
		http.Redirect(w, r, "/admin/shares?m=share-revoked", http.StatusSeeOther)
		return nil
	}))
}

// expiryOf reads the date of the expiry field ("" for none): a share
// expires when that day ends in the reader's zone.
func expiryOf(v string, loc *time.Location) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	d, err := time.ParseInLocation("2006-01-02", v, loc)
	if err != nil {
		return time.Time{}, errShareExpiry
	}
	// The zero time means no expiry to the service: a day that ends
	// there (0000-12-31 in UTC) is long past, like any other.
	if end := d.AddDate(0, 0, 1); !end.IsZero() {
		return end, nil
	}
	return time.Time{}, errShareExpiry
}

type adminSharesPage struct {
	layout
	Section string
	List    *share.Page
	Sharing bool
}

// documentShares are the shares of a document's page the reader may
// manage; on is false when the dialog is not shown (no share service, or
// a reader who may not share and has no shares).
func (s *server) documentShares(ctx context.Context, a quire.Actor, docID string) (on bool, out []share.View, err error) {
	if s.cfg.Shares == nil {
		return false, nil, nil
	}
	out, err = s.cfg.Shares.List(ctx, a, docID)
	if err != nil {
		return false, nil, err
	}
	return a.Can(quire.LevelWrite) || len(out) > 0, out, nil
}
