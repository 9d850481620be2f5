package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"quire"
	"quire/webhook"
)

// The Webhooks section of the Administration area (product.md section 16):
// the receivers of audit events, each with its delivery log, over the
// same webhook service as the administrator API.

func init() {
	for k, v := range map[string]string{
		"webhook-saved":   "Webhook saved.",
		"webhook-deleted": "Webhook deleted; its pending deliveries went with it.",
	} {
		flashes[k] = v
	}
}

type webhooksPage struct {
	layout
	Section    string
	Hooks      []quire.Webhook
	Hook       *quire.Webhook
	Deliveries []quire.WebhookDelivery
	NextCursor string
	Secret     string     // the secret of a webhook just created, shown once
	Form       url.Values // the values of a refused form, to show again
}

var webhookFieldLabels = map[string]string{"url": "URL", "events": "Events", "secret": "Secret", "limit": "Limit", "cursor": "Page"}

// webhookForm reads the fields of the create and edit forms: events are
// separated by commas, spaces or lines.
func webhookForm(r *http.Request, create bool) webhook.Input {
	f := r.PostForm
	u := f.Get("url")
	events := strings.FieldsFunc(f.Get("events"), func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' })
	in := webhook.Input{URL: &u, Events: &events}
	if s := f.Get("secret"); s != "" {
		in.Secret = &s
	}
	if !create {
		active := f.Get("active") == "on"
		in.Active = &active
	}
	return in
}

func (s *server) webhookRoutes() {
	m := s.mux
	m.Handle("GET /admin/webhooks", s.admin(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		return s.renderWebhooks(w, r, a, nil)
	}))
	m.Handle("POST /admin/webhooks", s.admin(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		h, err := s.cfg.Webhooks.Create(r.Context(), a, webhookForm(r, true))
		if err != nil {
			return s.renderWebhooks(w, r, a, err)
		}
		// The secret is shown on the answer to this POST and never again.
		p := webhooksPage{layout: s.section(r, &a, "admin", "Webhook created"), Section: "webhooks", Hook: h, Secret: h.Secret}
		return s.show(w, r, http.StatusCreated, "admin_webhook.html", p)
	}))
	m.Handle("GET /admin/webhooks/{id}", s.admin(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		return s.renderWebhook(w, r, a, nil)
	}))
	m.Handle("POST /admin/webhooks/{id}", s.admin(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		id := r.PathValue("id")
		if _, err := s.cfg.Webhooks.Update(r.Context(), a, id, webhookForm(r, false)); err != nil {
			return s.renderWebhook(w, r, a, err)
		}
		http.Redirect(w, r, "/admin/webhooks/"+url.PathEscape(id)+"?m=webhook-saved", http.StatusSeeOther)
		return nil
	}))
	m.Handle("POST /admin/webhooks/{id}/delete", s.admin(func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		if err := s.cfg.Webhooks.Delete(r.Context(), a, r.PathValue("id")); err != nil {
			return err
		}
		http.Redirect(w, r, "/admin/webhooks?m=webhook-deleted", http.StatusSeeOther)
		return nil
	}))
}

// refused fills p with the refusal err of the form just sent; it returns
// the status to answer, or err itself when it is not a refusal.
func (p *webhooksPage) refused(r *http.Request, err error) (int, error) {
	st, ok := statusOf(errorCode(err))
	if !ok || st >= 500 {
		return 0, err
	}
	p.Error = refusal(err, webhookFieldLabels)
	var e *quire.Error
	if errors.As(err, &e) {
		for k, v := range e.Fields {
			p.Fields[k] = v
		}
	}
	p.Form, p.Flash = r.PostForm, ""
	return st, nil
}

func (s *server) renderWebhooks(w http.ResponseWriter, r *http.Request, a quire.Actor, err error) error {
	p := webhooksPage{layout: s.section(r, &a, "admin", "Webhooks"), Section: "webhooks", Form: url.Values{}}
	status := http.StatusOK
	if err != nil {
		if status, err = p.refused(r, err); err != nil {
			return err
		}
	}
	hooks, lerr := s.cfg.Webhooks.List(r.Context(), a)
	if lerr != nil {
		return lerr
	}
	p.Hooks = hooks
	return s.show(w, r, status, "admin_webhooks.html", p)
}

func (s *server) renderWebhook(w http.ResponseWriter, r *http.Request, a quire.Actor, err error) error {
	p := webhooksPage{layout: s.section(r, &a, "admin", "Webhook"), Section: "webhooks", Form: url.Values{}}
	status := http.StatusOK
	if err != nil {
		if status, err = p.refused(r, err); err != nil {
			return err
		}
	}
	id := r.PathValue("id")
	h, lerr := s.cfg.Webhooks.Get(r.Context(), a, id)
	if lerr != nil {
		return lerr
	}
	p.Hook = h
	q := r.URL.Query()
	ds, next, lerr := s.cfg.Webhooks.Deliveries(r.Context(), a, id, q.Get("cursor"), "")
	if lerr != nil {
		return lerr
	}
	p.Deliveries, p.NextCursor = ds, next
	return s.show(w, r, status, "admin_webhook.html", p)
}
