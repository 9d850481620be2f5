package mfa

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

func TestMatchStepAcceptsOneStepEitherSide(t *testing.T) {
	raw := []byte("12345678901234567890")
	secret := b32.EncodeToString(raw)
	now := time.Date(2026, 11, 25, 10, 0, 15, 0, time.UTC)
	step := now.Unix() / period
	for _, c := range []struct {
		offset time.Duration
		ok     bool
	}{{-60 * time.Second, false}, {-30 * time.Second, true}, {0, true}, {30 * time.Second, true}, {60 * time.Second, false}} {
		code, err := totp.GenerateCode(secret, now.Add(c.offset))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := matchStep(raw, code, now)
		if ok != c.ok {
			t.Errorf("code of %v: accepted %v, want %v", c.offset, ok, c.ok)
		}
		if ok && got != step+int64(c.offset/(30*time.Second)) {
			t.Errorf("code of %v: step %d, want %d", c.offset, got, step+int64(c.offset/(30*time.Second)))
		}
	}
	code, _ := totp.GenerateCode(secret, now)
	if _, ok := matchStep(raw, code[:3]+" "+code[3:], now); !ok {
		t.Error("a code written with a space was refused")
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef", "１２３４５６"} {
		if _, ok := matchStep(raw, bad, now); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRecoveryCodes(t *testing.T) {
	codes, hashes := newRecoveryCodes()
	if len(codes) != RecoveryCodes || len(hashes) != RecoveryCodes {
		t.Fatalf("%d codes, %d hashes", len(codes), len(hashes))
	}
	shape := regexp.MustCompile(`^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$`)
	for i, c := range codes {
		if !shape.MatchString(c) {
			t.Errorf("code %q", c)
		}
		for _, typed := range []string{c, " " + c + " ", string(bytes.ToUpper([]byte(c))), c[0:4] + c[5:9] + c[10:14] + c[15:19], c[0:9] + " " + c[10:]} {
			if !bytes.Equal(recoveryHash(typed), hashes[i]) {
				t.Errorf("%q typed as %q does not match", c, typed)
			}
		}
	}
	for _, bad := range []string{"", "short", codes[0] + "x", string(make([]byte, 100))} {
		if recoveryHash(bad) != nil {
			t.Errorf("%q has a hash", bad)
		}
	}
}
