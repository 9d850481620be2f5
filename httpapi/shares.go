package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"quire"
	"quire/documents"
	"quire/share"
)

// Share links (product.md section 21).

// shareJSON is SHARE: url is null when the token cannot be opened any
// more (the secret key changed); expires_at and last_viewed_at are null
// for none.
type shareJSON struct {
	ID           string     `json:"id"`
	URL          *string    `json:"url"`
	DocumentID   string     `json:"document_id"`
	CreatedBy    personJSON `json:"created_by"`
	CreatedAt    string     `json:"created_at"`
	ExpiresAt    *string    `json:"expires_at"`
	Views        int64      `json:"views"`
	LastViewedAt *string    `json:"last_viewed_at"`
}

func newShareJSON(v *share.View) shareJSON {
	out := shareJSON{ID: v.ID, DocumentID: v.DocumentID, CreatedBy: personJSON{ID: v.CreatedByID, Name: v.CreatedByName},
		CreatedAt: formatTime(v.CreatedAt), Views: v.Views, ExpiresAt: maybeTime(v.ExpiresAt), LastViewedAt: maybeTime(v.LastViewedAt)}
	if v.URL != "" {
		out.URL = &v.URL
	}
	return out
}

func maybeTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}

func handleShareCreate(sh *share.Service) authedFunc {
	type body struct {
		ExpiresAt json.RawMessage `json:"expires_at"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		b, _, err := decodeOptional[body](w, r)
		if err != nil {
			return err
		}
		var expires time.Time
		errs := map[string]string{}
		if at := field[string](b.ExpiresAt, "expires_at", "an RFC 3339 date-time or null", errs); at.Set && !at.Null {
			if expires, err = time.Parse(time.RFC3339Nano, at.Value); err != nil {
				errs["expires_at"] = "must be an RFC 3339 date-time"
			} else if expires.IsZero() {
				// The service reads the zero time as no expiry; this one
				// is given, and long past.
				errs["expires_at"] = "must be in the future"
			}
		}
		if len(errs) > 0 {
			return quire.Invalid(errs)
		}
		v, err := sh.Create(r.Context(), a, r.PathValue("id"), expires)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, map[string]any{"share": newShareJSON(v)})
	}
}

func handleShareList(sh *share.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		views, err := sh.List(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"shares": convertAll(views, newShareJSON)})
	}
}

func handleShareRevoke(sh *share.Service) authedFunc {
	return handleByID(sh.Revoke, "Share revoked")
}

func handleAdminShareList(sh *share.Service) authedFunc {
	type response struct {
		Shares     []shareJSON    `json:"shares"`
		Pagination paginationJSON `json:"pagination"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		p, err := documents.ParsePageQuery(r.URL.Query())
		if err != nil {
			return err
		}
		page, limit := max(p.Page, 1), p.Limit
		if limit <= 0 {
			limit = share.DefaultLimit
		}
		limit = min(limit, share.MaxLimit)
		out, err := sh.All(r.Context(), a, page, limit)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, response{Shares: convertAll(out.Shares, newShareJSON),
			Pagination: paginationJSON{CurrentPage: out.Page, Limit: out.Limit, Total: out.Total, TotalPages: out.TotalPages, HasMore: out.HasMore}})
	}
}

// settingsJSON is the administrators' settings.
type settingsJSON struct {
	Sharing bool `json:"sharing"`
}

func handleAdminSettingsGet(sh *share.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		st, err := sh.Settings(r.Context(), a)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"settings": settingsJSON{Sharing: st.Sharing}})
	}
}

// handleAdminSettingsPut changes the settings sent; {"sharing": false}
// switches every share off at once.
func handleAdminSettingsPut(sh *share.Service) authedFunc {
	type body struct {
		Sharing json.RawMessage `json:"sharing"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		b, err := decode[body](w, r)
		if err != nil {
			return err
		}
		errs := map[string]string{}
		on := notNull[bool](b.Sharing, "sharing", "a boolean", errs)
		if on == nil && len(errs) == 0 {
			errs["sharing"] = "is required"
		}
		if len(errs) > 0 {
			return quire.Invalid(errs)
		}
		st, err := sh.SetSharing(r.Context(), a, *on)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"settings": settingsJSON{Sharing: st.Sharing}})
	}
}
