package auth

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func TestCheckPassword(t *testing.T) {
	const email = "ann.example@example.com"
	s := &Service{cfg: Config{MinPasswordLength: 15}}
	for _, c := range []struct {
		name     string
		password string
		want     string // the WEAK_PASSWORD message, "" when accepted
	}{
		{"15 characters pass", "fifteen chars!!", ""},
		{"14 characters are too short", "fourteen chars", "Password must be at least 15 characters long"},
		{"length counts code points, not bytes: 15 accented letters pass", strings.Repeat("é", 15), ""},
		{"14 accented letters (28 bytes) are too short", strings.Repeat("é", 14), "Password must be at least 15 characters long"},
		{"128 code points pass", strings.Repeat("🔑", 128), ""},
		{"129 code points are too long", strings.Repeat("🔑", 129), "Password must be at most 128 characters long"},
		{"any characters pass, spaces included", "    a    b    c    ", ""},
		{"the email is refused", email, "Password must not be the email address"},
		{"the email in another case is refused", "Ann.Example@EXAMPLE.com", "Password must not be the email address"},
		{"a common password is refused", "passwordpassword", "Password is too common, choose another"},
		{"a common password in another case is refused", "PassWordPassWord", "Password is too common, choose another"},
		{"a common password with one more character passes", "passwordpassword1", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.CheckPassword(email, c.password)
			got := ""
			if err != nil {
				if code := quire.ErrorCode(err); code != quire.EWEAKPASSWORD {
					t.Fatalf("code %s, want %s", code, quire.EWEAKPASSWORD)
				}
				got = quire.ErrorMessage(err)
			}
			if got != c.want {
				t.Errorf("CheckPassword(%q) = %q, want %q", c.password, got, c.want)
			}
		})
	}

	t.Run("the minimum is configurable but never below 8", func(t *testing.T) {
		got := map[int]int{}
		for _, configured := range []int{0, 4, 8, 12, 20} {
			s := &Service{cfg: Config{MinPasswordLength: configured}}
			got[configured] = s.minPasswordLength()
		}
		if diff := cmp.Diff(map[int]int{0: 15, 4: 8, 8: 8, 12: 12, 20: 20}, got); diff != "" {
			t.Errorf("effective minimum by configured (-want +got):\n%s", diff)
		}
		s := &Service{cfg: Config{MinPasswordLength: 4}}
		if err := s.CheckPassword(email, "sevench"); quire.ErrorCode(err) != quire.EWEAKPASSWORD {
			t.Errorf("7 characters with a minimum of 4: %v, want WEAK_PASSWORD", err)
		}
		if err := s.CheckPassword(email, "q8k2m4n6"); err != nil {
			t.Errorf("8 characters with a minimum of 4: %v, want accepted", err)
		}
	})

	t.Run("with a minimum of 8, short common passwords are refused too", func(t *testing.T) {
		s := &Service{cfg: Config{MinPasswordLength: 8}}
		for _, p := range []string{"password", "12345678", "iloveyou"} {
			if err := s.CheckPassword(email, p); quire.ErrorMessage(err) != "Password is too common, choose another" {
				t.Errorf("%q: %v, want refused as common", p, err)
			}
		}
	})
}
