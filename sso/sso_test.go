package sso

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEmailVerifiedAsBooleanOrString(t *testing.T) {
	for _, c := range []struct {
		json string
		want bool
	}{
		{`{"email_verified":true}`, true},
		{`{"email_verified":"true"}`, true},
		{`{"email_verified":false}`, false},
		{`{"email_verified":"false"}`, false},
		{`{"email_verified":"yes"}`, false},
		{`{}`, false},
	} {
		var v struct {
			EmailVerified stringBool `json:"email_verified"`
		}
		if err := json.Unmarshal([]byte(c.json), &v); err != nil || bool(v.EmailVerified) != c.want {
			t.Errorf("%s: %v, %v; want %v", c.json, v.EmailVerified, err, c.want)
		}
	}
}

func TestNormalizeDomains(t *testing.T) {
	got := NormalizeDomains([]string{" Acme.com", "@example.ORG", "", "  "})
	if d := cmp.Diff([]string{"acme.com", "example.org"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got := NormalizeDomains([]string{""}); got != nil {
		t.Errorf("empty list: %q", got)
	}
}
