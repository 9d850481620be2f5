package auth

import (
	"bufio"
	_ "embed"
	"strings"
	"sync"
	"unicode/utf8"

	"quire"
)

// Password policy (contract section 4, after NIST SP 800-63B-4 for
// passwords used alone), on the password in NFKC: a length in code points
// between the configured
// minimum and MaxPasswordLength, never truncated, no composition rules;
// not the email, not a common password (both ignoring case).
const (
	MaxPasswordLength = 128
	// FloorPasswordLength is the lowest minimum a configuration may set.
	FloorPasswordLength = 8
	// defaultMinPasswordLength applies when Config leaves the minimum 0.
	defaultMinPasswordLength = 15
)

// commonPasswords is the zxcvbn list of the most common passwords (from
// @zxcvbn-ts/language-common 4.1.3; MIT, see commonpasswords.LICENSE.txt),
// most common first, one a line, in lower case.
//
//go:embed commonpasswords.txt
var commonPasswords string

// commonSet holds the lower-cased entries that the length rule alone does
// not already refuse: only passwords of at least FloorPasswordLength code
// points can reach the lookup, so shorter entries would never be asked for.
var commonSet = sync.OnceValue(func() map[string]struct{} {
	set := make(map[string]struct{}, 20000)
	sc := bufio.NewScanner(strings.NewReader(commonPasswords))
	for sc.Scan() {
		p := strings.ToLower(strings.TrimSpace(sc.Text()))
		if utf8.RuneCountInString(p) >= FloorPasswordLength {
			set[p] = struct{}{}
		}
	}
	return set
})

// minPasswordLength is the configured minimum, never below the floor.
func (s *Service) minPasswordLength() int {
	n := s.cfg.MinPasswordLength
	if n == 0 {
		n = defaultMinPasswordLength
	}
	return max(n, FloorPasswordLength)
}

// CheckPassword reports whether password may be the password of the
// account email: WEAK_PASSWORD, with a message that says why, when not. The
// rules apply to the password in NFKC, the form that is hashed: its length
// is counted in the code points of that form.
func (s *Service) CheckPassword(email, password string) error {
	password = normalizePassword(password)
	n := utf8.RuneCountInString(password)
	if min := s.minPasswordLength(); n < min {
		return quire.Errorf(quire.EWEAKPASSWORD, "Password must be at least %d characters long", min)
	}
	if n > MaxPasswordLength {
		return quire.Errorf(quire.EWEAKPASSWORD, "Password must be at most %d characters long", MaxPasswordLength)
	}
	if email != "" && quire.NormalizeEmail(password) == quire.NormalizeEmail(email) {
		return quire.Errorf(quire.EWEAKPASSWORD, "Password must not be the email address")
	}
	if _, common := commonSet()[strings.ToLower(password)]; common {
		return quire.Errorf(quire.EWEAKPASSWORD, "Password is too common, choose another")
	}
	return nil
}
