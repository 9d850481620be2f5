package mail

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	link := "https://docs.example.com/reset-password?token=abc_DEF-123"

	t.Run("the reset mail carries the link and its lifetime in text and HTML", func(t *testing.T) {
		m, err := Render(ResetPassword, "ann@example.com", Data{Email: "ann@example.com", Link: link, ValidFor: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if m.To != "ann@example.com" || m.Subject != "Reset your quire password" {
			t.Errorf("to %q, subject %q", m.To, m.Subject)
		}
		for _, want := range []string{link, "within 1 hour", "ann@example.com"} {
			if !strings.Contains(m.Text, want) {
				t.Errorf("text lacks %q:\n%s", want, m.Text)
			}
			if !strings.Contains(m.HTML, want) {
				t.Errorf("HTML lacks %q:\n%s", want, m.HTML)
			}
		}
		if !strings.Contains(m.HTML, `href="`+link+`"`) {
			t.Errorf("HTML has no anchor to the link:\n%s", m.HTML)
		}
	})

	t.Run("the setup mail greets by name and escapes it in HTML", func(t *testing.T) {
		m, err := Render(SetupPassword, "bob@example.com",
			Data{Name: `Bob <script>alert(1)</script>`, Email: "bob@example.com", Link: link, ValidFor: 168 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != "You are invited to quire" {
			t.Errorf("subject %q", m.Subject)
		}
		if !strings.HasPrefix(m.Text, "Hello Bob <script>alert(1)</script>,\n") || !strings.Contains(m.Text, "within 7 days") {
			t.Errorf("text:\n%s", m.Text)
		}
		if strings.Contains(m.HTML, "<script>") || !strings.Contains(m.HTML, "Bob &lt;script&gt;") {
			t.Errorf("HTML does not escape the name:\n%s", m.HTML)
		}
	})

	t.Run("an unknown template is an error", func(t *testing.T) {
		if _, err := Render("welcome", "ann@example.com", Data{}); err == nil {
			t.Error("no error")
		}
	})
}

func TestValidFor(t *testing.T) {
	got := map[time.Duration]string{}
	want := map[time.Duration]string{
		time.Hour:        "1 hour",
		2 * time.Hour:    "2 hours",
		24 * time.Hour:   "1 day",
		168 * time.Hour:  "7 days",
		36 * time.Hour:   "36 hours",
		30 * time.Minute: "30 minutes",
		90 * time.Minute: "90 minutes",
		time.Minute:      "1 minute",
		90 * time.Second: "2 minutes",
	}
	for d := range want {
		got[d] = validFor(d)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("validFor (-want +got):\n%s", diff)
	}
}
