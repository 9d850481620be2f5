package mail

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"

	"quire"
)

// Names of the message templates.
const (
	ResetPassword = "reset-password" // link to /reset-password, from forgot-password
	SetupPassword = "setup-password" // link to /setup-password, from an invitation
)

// Data fills a message template.
type Data struct {
	Name     string        // the recipient's name ("" when not known)
	Email    string        // the account's email
	Link     string        // the link, with its token
	ValidFor time.Duration // how long the link works
}

// templates/NAME.txt holds the subject (as the template "subject") and the
// plain-text body; templates/NAME.html the HTML body, escaped by
// html/template.
//
//go:embed templates
var templateFS embed.FS

type messageTemplate struct {
	text *texttemplate.Template
	html *htmltemplate.Template
}

var funcs = map[string]any{"validFor": validFor}

// messages are parsed once at start-up: a broken template is a bug that
// every test run finds, not a condition to handle per mail.
var messages = func() map[string]messageTemplate {
	out := map[string]messageTemplate{}
	for _, name := range []string{ResetPassword, SetupPassword} {
		out[name] = messageTemplate{
			text: texttemplate.Must(texttemplate.New(name+".txt").Funcs(funcs).Option("missingkey=error").
				ParseFS(templateFS, "templates/"+name+".txt")),
			html: htmltemplate.Must(htmltemplate.New(name+".html").Funcs(funcs).Option("missingkey=error").
				ParseFS(templateFS, "templates/"+name+".html")),
		}
	}
	return out
}()

// Render returns the mail to the address to built from the template name,
// ready to be queued (ID, CreatedAt and the delivery fields are the
// caller's and the outbox's).
func Render(name, to string, d Data) (*quire.Mail, error) {
	t, ok := messages[name]
	if !ok {
		return nil, fmt.Errorf("render mail: no template %q", name)
	}
	var subject, text, html bytes.Buffer
	if err := t.text.ExecuteTemplate(&subject, "subject", d); err != nil {
		return nil, fmt.Errorf("render mail %s: %w", name, err)
	}
	if err := t.text.Execute(&text, d); err != nil {
		return nil, fmt.Errorf("render mail %s: %w", name, err)
	}
	if err := t.html.Execute(&html, d); err != nil {
		return nil, fmt.Errorf("render mail %s: %w", name, err)
	}
	return &quire.Mail{
		To:      to,
		Subject: strings.TrimSpace(subject.String()),
		Text:    text.String(),
		HTML:    html.String(),
	}, nil
}

// Notifications is the name of the mail of notifications (package
// notify): mentions and replies at once, or the daily digest.
const Notifications = "notifications"

// NotificationData fills the mail of notifications.
type NotificationData struct {
	Name        string // the recipient's name
	Digest      bool   // the daily digest, else the instant mail
	Items       []NotificationItem
	Unsubscribe string // the one-click unsubscribe address, also the mail's List-Unsubscribe
}

// NotificationItem is one notification of a mail.
type NotificationItem struct {
	Actor   string // who did it
	What    string // what they did: "mentioned you", "replied", ...
	Title   string // the document's title
	Excerpt string // the start of the comment, "" for none
	Link    string // the place in the document
}

var notificationMessage = messageTemplate{
	text: texttemplate.Must(texttemplate.New(Notifications+".txt").Option("missingkey=error").
		ParseFS(templateFS, "templates/"+Notifications+".txt")),
	html: htmltemplate.Must(htmltemplate.New(Notifications+".html").Option("missingkey=error").
		ParseFS(templateFS, "templates/"+Notifications+".html")),
}

// RenderNotifications returns the mail of notifications to the address to,
// with its one-click unsubscribe address.
func RenderNotifications(to string, d NotificationData) (*quire.Mail, error) {
	t := notificationMessage
	var subject, text, html bytes.Buffer
	if err := t.text.ExecuteTemplate(&subject, "subject", d); err != nil {
		return nil, fmt.Errorf("render mail %s: %w", Notifications, err)
	}
	if err := t.text.Execute(&text, d); err != nil {
		return nil, fmt.Errorf("render mail %s: %w", Notifications, err)
	}
	if err := t.html.Execute(&html, d); err != nil {
		return nil, fmt.Errorf("render mail %s: %w", Notifications, err)
	}
	return &quire.Mail{To: to, Subject: strings.TrimSpace(subject.String()), Text: text.String(), HTML: html.String(),
		Unsubscribe: d.Unsubscribe}, nil
}

// validFor writes a lifetime the way a person says it: "1 hour",
// "7 days", "90 minutes".
func validFor(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return unit(int64(d/(24*time.Hour)), "day")
	case d >= time.Hour && d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	default:
		return unit(int64((d+time.Minute-1)/time.Minute), "minute")
	}
}
