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
