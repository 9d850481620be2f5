package httpapi

import (
	"encoding/json"
	"net/http"

	"quire"
	"quire/webhook"
)

// Webhooks (product.md section 16): administrators only.

type webhookJSON struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Active    bool     `json:"active"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
	// Secret is shown once, in the answer to the creation (and to a
	// change of the secret).
	Secret string `json:"secret,omitempty"`
}

func newWebhookJSON(w *quire.Webhook) webhookJSON {
	return webhookJSON{ID: w.ID, URL: w.URL, Events: w.Events, Active: w.Active,
		CreatedAt: formatTime(w.CreatedAt), UpdatedAt: formatTime(w.UpdatedAt), Secret: w.Secret}
}

type deliveryJSON struct {
	ID          string  `json:"id"`
	EventID     string  `json:"eventId"`
	Action      string  `json:"action"`
	Status      string  `json:"status"`
	Attempts    int     `json:"attempts"`
	LastStatus  *int    `json:"lastStatusCode"`
	LastError   string  `json:"lastError"`
	CreatedAt   string  `json:"createdAt"`
	DeliveredAt *string `json:"deliveredAt"`
	NextTryAt   *string `json:"nextTryAt"`
}

func newDeliveryJSON(d *quire.WebhookDelivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, EventID: d.EventID, Action: d.Action, Status: d.State, Attempts: d.Attempts,
		LastError: d.LastError, CreatedAt: formatTime(d.CreatedAt)}
	if d.LastStatus != 0 {
		out.LastStatus = &d.LastStatus
	}
	if !d.DeliveredAt.IsZero() {
		t := formatTime(d.DeliveredAt)
		out.DeliveredAt = &t
	}
	if !d.NextTryAt.IsZero() {
		t := formatTime(d.NextTryAt)
		out.NextTryAt = &t
	}
	return out
}

// webhookInput reads the body of a create or a change.
func webhookInput(w http.ResponseWriter, r *http.Request) (webhook.Input, error) {
	type body struct {
		URL    json.RawMessage `json:"url"`
		Events json.RawMessage `json:"events"`
		Secret json.RawMessage `json:"secret"`
		Active json.RawMessage `json:"active"`
	}
	b, err := decode[body](w, r)
	if err != nil {
		return webhook.Input{}, err
	}
	errs := map[string]string{}
	in := webhook.Input{
		URL:    notNull[string](b.URL, "url", "a string", errs),
		Secret: notNull[string](b.Secret, "secret", "a string", errs),
		Active: notNull[bool](b.Active, "active", "a boolean", errs),
	}
	if events := notNull[[]*string](b.Events, "events", "an array of strings", errs); events != nil {
		list := make([]string, 0, len(*events))
		for _, e := range *events {
			if e == nil {
				errs["events"] = "must be an array of strings"
				break
			}
			list = append(list, *e)
		}
		in.Events = &list
	}
	if len(errs) > 0 {
		return in, quire.Invalid(errs)
	}
	return in, nil
}

func handleWebhookList(s *webhook.Service) authedFunc {
	return handleList(s.List, "webhooks", newWebhookJSON)
}

func handleWebhookGet(s *webhook.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		h, err := s.Get(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"webhook": newWebhookJSON(h)})
	}
}

func handleWebhookCreate(s *webhook.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		in, err := webhookInput(w, r)
		if err != nil {
			return err
		}
		h, err := s.Create(r.Context(), a, in)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, map[string]any{"webhook": newWebhookJSON(h)})
	}
}

func handleWebhookUpdate(s *webhook.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		in, err := webhookInput(w, r)
		if err != nil {
			return err
		}
		h, err := s.Update(r.Context(), a, r.PathValue("id"), in)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"webhook": newWebhookJSON(h)})
	}
}

func handleWebhookDelete(s *webhook.Service) authedFunc {
	return handleByID(s.Delete, "Webhook deleted")
}

func handleWebhookDeliveries(s *webhook.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q, err := strictQuery(r)
		if err != nil {
			return err
		}
		ds, next, err := s.Deliveries(r.Context(), a, r.PathValue("id"), q.Get("cursor"), q.Get("limit"))
		if err != nil {
			return err
		}
		out := convertAll(ds, newDeliveryJSON)
		var cursor *string
		if next != "" {
			cursor = &next
		}
		return writeJSON(w, http.StatusOK, map[string]any{"deliveries": out, "nextCursor": cursor})
	}
}
