// Package mail renders quire's messages from embedded templates and
// delivers the transactional outbox: a Worker claims queued mails from the
// database and hands them to a Sender (SMTP, or a local folder when no mail
// server is configured), retrying with capped exponential back-off. Mails
// are queued in the same transaction as the record they belong to, so no
// request waits for the mail server and a crash or restart loses no mail.
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"quire"
)

// Sender delivers one mail. An error means the mail was not accepted and
// may be tried again.
type Sender interface {
	Send(ctx context.Context, m quire.Mail) error
}

// DefaultFrom is the sender address when none is configured.
const DefaultFrom = "quire <quire@localhost>"

// NewSender returns the Sender for smtpURL:
//
//   - smtp://[user:pass@]host[:port] (port 587 by default) uses STARTTLS
//     when the server offers it;
//   - smtps://[user:pass@]host[:port] (port 465 by default) uses TLS from
//     the first byte;
//   - "" writes each mail as outboxDir/ID.eml and logs it, link included,
//     so that a local user can follow it.
//
// User and password, URL-encoded in the URL, authenticate the session
// (SCRAM-SHA-256, PLAIN or LOGIN, whichever the server offers first in that
// order; PLAIN and LOGIN only over TLS or to a loopback host). from is the
// From address (DefaultFrom when "").
func NewSender(smtpURL, from, outboxDir string, logger *slog.Logger) (Sender, error) {
	if from == "" {
		from = DefaultFrom
	}
	if _, err := netmail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("mail from %q: %w", from, err)
	}
	if smtpURL == "" {
		if outboxDir == "" {
			return nil, errors.New("mail: no SMTP URL and no outbox folder")
		}
		return &dirSender{dir: outboxDir, from: from, logger: logger}, nil
	}
	return newSMTPSender(smtpURL, from, nil)
}

// smtpSender delivers over SMTP with one connection per mail: mails are
// few (password flows), and a fresh connection never inherits a broken one.
type smtpSender struct {
	host string
	opts []gomail.Option
	from string
}

// sendTimeout bounds one SMTP conversation; it must stay well under the
// worker's lease so that a slow server never makes two workers send the
// same mail.
const sendTimeout = 30 * time.Second

// newSMTPSender parses u. tlsConfig, when not nil, replaces the default
// (the system's roots, the URL's host name), for tests with their own CA.
func newSMTPSender(rawURL, from string, tlsConfig *tls.Config) (*smtpSender, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's error quotes the URL, password included.
		return nil, errors.New("smtp url: not a URL")
	}
	port := 0
	var opts []gomail.Option
	switch u.Scheme {
	case "smtp":
		port = 587
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	case "smtps":
		port = 465
		opts = append(opts, gomail.WithSSL())
	default:
		return nil, fmt.Errorf("smtp url %s: the scheme must be smtp or smtps", u.Redacted())
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("smtp url %s: no host", u.Redacted())
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("smtp url %s: bad port", u.Redacted())
		}
	}
	opts = append(opts, gomail.WithPort(port), gomail.WithTimeout(sendTimeout))
	if tlsConfig != nil {
		opts = append(opts, gomail.WithTLSConfig(tlsConfig))
	}
	if u.User != nil && u.User.Username() != "" {
		pass, _ := u.User.Password()
		opts = append(opts,
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(pass),
			gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthSCRAMSHA256, gomail.SMTPAuthPlain, gomail.SMTPAuthLogin))
	}
	// Check the options once here, so that a bad URL fails at start-up
	// rather than at the first mail.
	if _, err := gomail.NewClient(host, opts...); err != nil {
		return nil, fmt.Errorf("smtp url %s: %w", u.Redacted(), err)
	}
	return &smtpSender{host: host, opts: opts, from: from}, nil
}

func (s *smtpSender) Send(ctx context.Context, m quire.Mail) error {
	msg, err := message(s.from, m)
	if err != nil {
		return err
	}
	client, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp %s: %w", s.host, err)
	}
	return nil
}

// message builds the MIME message of m: plain text with an HTML
// alternative. The Message-ID derives from the mail's ID, so a mail sent
// twice (a worker died between the server's acceptance and MailSent)
// carries the same ID and receivers can tell.
func message(from string, m quire.Mail) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := msg.From(from); err != nil {
		return nil, fmt.Errorf("mail from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("mail to: %w", err)
	}
	msg.Subject(m.Subject)
	if m.ID != "" {
		msg.SetMessageIDWithValue(m.ID + "@quire")
	} else {
		msg.SetMessageID()
	}
	if m.CreatedAt.IsZero() {
		msg.SetDate()
	} else {
		msg.SetDateWithValue(m.CreatedAt)
	}
	// RFC 3834: tells auto-responders not to answer.
	msg.SetGenHeader("Auto-Submitted", "auto-generated")
	if m.Unsubscribe != "" {
		// RFC 8058: a mail program may offer one-click unsubscribe, a POST
		// of "List-Unsubscribe=One-Click" to the address.
		msg.SetGenHeader("List-Unsubscribe", "<"+m.Unsubscribe+">")
		msg.SetGenHeader("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if strings.TrimSpace(m.HTML) != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	return msg, nil
}
