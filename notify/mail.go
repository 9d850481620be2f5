package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"quire"
	"quire/mail"
)

// Mail timing.
const (
	// instantWait is how long the instant mail waits after the first of a
	// burst of mentions and replies, to carry the rest with it; with the
	// worker's mail tick it goes within two minutes.
	instantWait = 45 * time.Second
	mailEvery   = 15 * time.Second
	digestHour  = 8 // the digest goes at 08:00 in the person's time zone
	// UnsubscribeTTL is how long the one-click unsubscribe link of a mail
	// works.
	UnsubscribeTTL = 60 * 24 * time.Hour
	mailBatch      = 50
)

// DigestDue returns the latest digest time (08:00 in the zone timezone,
// UTC when it is "" or unknown) at or before now.
func DigestDue(now time.Time, timezone string) time.Time {
	loc, err := time.LoadLocation(timezone)
	if err != nil || timezone == "" {
		loc = time.UTC
	}
	t := now.In(loc)
	due := time.Date(t.Year(), t.Month(), t.Day(), digestHour, 0, 0, 0, loc)
	if due.After(now) {
		due = time.Date(t.Year(), t.Month(), t.Day()-1, digestHour, 0, 0, 0, loc)
	}
	return due.UTC()
}

// Mail queues the notification mails due now and returns how many.
func (s *Service) Mail(ctx context.Context) (int, error) {
	now := s.clock()
	return s.store.MailNotifications(ctx, now, quire.NotificationMailer{
		InstantBefore: now.Add(-instantWait),
		DigestDue:     func(tz string) time.Time { return DigestDue(now, tz) },
		Render: func(u *quire.User, digest bool, ns []quire.Notification) (*quire.Mail, error) {
			return s.render(u, digest, ns, now)
		},
		Limit: mailBatch,
	})
}

// what says what a notification's actor did, for a mail.
var what = map[string]string{
	quire.NotifyMention:         "mentioned you",
	quire.NotifyComment:         "commented",
	quire.NotifyReply:           "replied",
	quire.NotifyResolved:        "resolved your thread",
	quire.NotifyDocumentUpdated: "changed the document",
}

// render builds the mail of ns to u: each links to its place, the
// document's page (at the comment when there is one), under the public
// URL.
func (s *Service) render(u *quire.User, digest bool, ns []quire.Notification, now time.Time) (*quire.Mail, error) {
	d := mail.NotificationData{Name: u.Name, Digest: digest, Unsubscribe: s.UnsubscribeURL(u.ID, now)}
	for _, n := range ns {
		link := s.publicURL + "/documents/" + url.PathEscape(n.DocumentID)
		if n.CommentID != "" {
			link += "#comment-" + url.PathEscape(n.CommentID)
		}
		actor := n.ActorName
		if actor == "" {
			actor = "Someone"
		}
		d.Items = append(d.Items, mail.NotificationItem{Actor: actor, What: what[n.Kind], Title: n.DocumentTitle, Excerpt: n.Excerpt, Link: link})
	}
	return mail.RenderNotifications(u.Email, d)
}

// UnsubscribeURL is the one-click unsubscribe address of userID's mails
// made at now: POST to it switches that person's notification mail off.
func (s *Service) UnsubscribeURL(userID string, now time.Time) string {
	return s.publicURL + "/api/unsubscribe?token=" + s.unsubscribeToken(userID, now.Add(UnsubscribeTTL))
}

// unsubscribeToken is "userID.expiry.mac", mac the HMAC-SHA256 of the rest
// under the key derived for unsubscribing: it proves quire made it, it
// does one thing (switch notification mail off), and it expires.
func (s *Service) unsubscribeToken(userID string, expires time.Time) string {
	payload := userID + "." + strconv.FormatInt(expires.Unix(), 10)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

func (s *Service) mac(payload string) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte("quire notification unsubscribe\x00" + payload))
	return h.Sum(nil)
}

// Unsubscribe switches off the notification mail of the person token
// names; a token that is forged, altered or expired is INVALID_TOKEN.
// Unsubscribing twice is no error.
func (s *Service) Unsubscribe(ctx context.Context, token string) error {
	invalid := quire.Errorf(quire.EINVALIDTOKEN, "The unsubscribe link is invalid or has expired")
	if len(s.key) == 0 || len(token) > 200 {
		return invalid
	}
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return invalid
	}
	payload, sig := token[:i], token[i+1:]
	// Strict: a token is one spelling of its signature; the unused low
	// bits of the last character must be zero, so no second link works.
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return invalid
	}
	userID, exp, ok := strings.Cut(payload, ".")
	expires, err := strconv.ParseInt(exp, 10, 64)
	if !ok || err != nil || !s.clock().Before(time.Unix(expires, 0)) || !quire.ValidID(userID) {
		return invalid
	}
	err = s.store.SetNotificationEmail(ctx, userID, quire.NotifyEmailOff, s.clock())
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return invalid
	}
	return err
}
