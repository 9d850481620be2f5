// Package mfa is the second factor (product.md section 11): TOTP
// authenticators (RFC 6238: SHA-1, 6 digits, 30 s, one step either side)
// with their ten single-use recovery codes, the set-up and its
// confirmation, the check of a code at the second step of a sign-in, an
// administrator's reset, and the rule of a role's requireMfa.
//
// Secrets are sealed with the server's secret key (package secretkey)
// before they reach a store; recovery codes are stored as SHA-256 hashes.
// A code, once accepted, is never accepted again: each TOTP keeps the time
// step of its last accepted code, and a recovery code is marked used, each
// by one conditional write, so that of two requests with the same code one
// wins. The sign-in itself (passwords, limits, sessions) is package auth's,
// which asks this package whether a code is right.
package mfa

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"fmt"
	"image/png"
	"strings"
	"sync"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"quire"
	"quire/secretkey"
)

// The TOTP parameters of product.md section 11, which every authenticator
// app reads from the otpauth:// URL.
const (
	period     = 30 // seconds
	skew       = 1  // steps either side
	secretSize = 20 // bytes (160 bits, RFC 4226's recommendation)
)

// RecoveryCodes is how many recovery codes a confirmation gives.
const RecoveryCodes = 10

// sealPurpose names the key that seals TOTP secrets (secretkey.Key.Derive).
const sealPurpose = "totp secret"

// Config is the service's configuration.
type Config struct {
	// Key seals the TOTP secrets. nil: the key kept in the database is
	// loaded at first use (and generated when there is none).
	Key *secretkey.Key
	// Issuer names the service in authenticator apps ("quire" when "").
	Issuer string
	Now    func() time.Time
}

// Store is what the Service needs from persistence.
type Store interface {
	quire.MFAStore
	quire.Settings // the secret key kept in the database (secretkey.Load)
	UserByID(ctx context.Context, id string) (*quire.User, error)
}

// Recorded is what the Service changes with an audit event, on the store
// Recording returns (quire.Recorder).
type Recorded interface {
	quire.MFAStore
}

// Service is the second factor.
type Service struct {
	store     Store
	recording func(evs ...*quire.Event) Recorded
	cfg       Config

	mu  sync.Mutex
	key *secretkey.Key
}

// New returns the service over store; quire.Store is one, with S = quire.Store.
func New[S Recorded](store interface {
	Store
	quire.Recorder[S]
}, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Issuer == "" {
		cfg.Issuer = "quire"
	}
	recording := func(evs ...*quire.Event) Recorded { return store.Recording(evs...) }
	return &Service{store: store, recording: recording, cfg: cfg, key: cfg.Key}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// secretKey returns the sealing key, loading it from the database once.
func (s *Service) secretKey(ctx context.Context) (*secretkey.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil {
		k, _, err := secretkey.Load(ctx, s.store, "")
		if err != nil {
			return nil, err
		}
		s.key = k
	}
	return s.key, nil
}

var (
	errSetupRequired = quire.Errorf(quire.EMFASETUPREQUIRED, "Your role requires a second factor: set one up before you go on")
	errSessionOnly   = quire.Errorf(quire.EFORBIDDEN, "This needs a signed-in session, not an API token")
	errNoSetup       = quire.Invalid(map[string]string{"code": "has no set-up to confirm: ask for a new secret first"})
	errWrongCode     = quire.Invalid(map[string]string{"code": "is not the code your authenticator shows now"})
)

// SetupRequired returns MFA_SETUP_REQUIRED when the actor's role requires
// a second factor that the actor's user does not have.
func (s *Service) SetupRequired(ctx context.Context, a quire.Actor) error {
	if !a.User.Role.RequireMFA {
		return nil
	}
	has, err := s.store.HasSecondFactor(ctx, a.User.ID)
	if err != nil {
		return err
	}
	if !has {
		return errSetupRequired
	}
	return nil
}

// Enrolment is a TOTP set-up waiting for its confirmation: the secret in
// base32, for typing, and the otpauth:// URL the QR code carries.
type Enrolment struct {
	Secret string
	URL    string
}

// Begin starts a TOTP set-up for the actor (not active until confirmed),
// replacing one that waits. MFA_ALREADY_ENABLED while a TOTP is on.
func (s *Service) Begin(ctx context.Context, a quire.Actor) (*Enrolment, error) {
	if a.ViaToken() {
		return nil, errSessionOnly
	}
	k, err := s.secretKey(ctx)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, secretSize)
	rand.Read(raw)
	t := &quire.TOTP{UserID: a.User.ID, Secret: k.Seal(sealPurpose, raw, []byte(a.User.ID)), CreatedAt: s.now()}
	if err := s.store.BeginTOTP(ctx, t); err != nil {
		return nil, err
	}
	return s.enrolment(a.User.Email, raw)
}

// Pending returns the actor's set-up waiting for confirmation (ENOTFOUND
// when none waits), for the Account page and its QR code.
func (s *Service) Pending(ctx context.Context, a quire.Actor) (*Enrolment, error) {
	t, err := s.store.TOTP(ctx, a.User.ID)
	if err != nil {
		return nil, err
	}
	if !t.ConfirmedAt.IsZero() {
		return nil, quire.Errorf(quire.ENOTFOUND, "No set-up is waiting")
	}
	raw, err := s.open(ctx, t)
	if err != nil {
		return nil, err
	}
	return s.enrolment(a.User.Email, raw)
}

// QRCode returns the QR code of the actor's waiting set-up as a PNG image
// (ENOTFOUND when none waits).
func (s *Service) QRCode(ctx context.Context, a quire.Actor) ([]byte, error) {
	e, err := s.Pending(ctx, a)
	if err != nil {
		return nil, err
	}
	key, err := otp.NewKeyFromURL(e.URL)
	if err != nil {
		return nil, fmt.Errorf("totp key: %w", err)
	}
	img, err := key.Image(240, 240)
	if err != nil {
		return nil, fmt.Errorf("qr code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("qr code: %w", err)
	}
	return buf.Bytes(), nil
}

func (s *Service) enrolment(email string, raw []byte) (*Enrolment, error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: s.cfg.Issuer, AccountName: email, Period: period,
		Secret: raw, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return nil, fmt.Errorf("totp key: %w", err)
	}
	return &Enrolment{Secret: key.Secret(), URL: key.URL()}, nil
}

func (s *Service) open(ctx context.Context, t *quire.TOTP) ([]byte, error) {
	k, err := s.secretKey(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := k.Open(sealPurpose, t.Secret, []byte(t.UserID))
	if err != nil {
		return nil, fmt.Errorf("totp of user %s: %w", t.UserID, err)
	}
	return raw, nil
}

// Confirm activates the actor's waiting set-up with a code of its
// authenticator, which counts as used, and returns the ten recovery codes,
// shown this once. VALIDATION_ERROR (field code) for a wrong code or when
// no set-up waits; MFA_ALREADY_ENABLED when a TOTP is on. Records
// auth.mfa_enabled.
func (s *Service) Confirm(ctx context.Context, a quire.Actor, code string) ([]string, error) {
	if a.ViaToken() {
		return nil, errSessionOnly
	}
	t, err := s.store.TOTP(ctx, a.User.ID)
	switch {
	case quire.ErrorCode(err) == quire.ENOTFOUND:
		return nil, errNoSetup
	case err != nil:
		return nil, err
	case !t.ConfirmedAt.IsZero():
		return nil, quire.Errorf(quire.EMFAENABLED, "A second factor is already on: switch it off first")
	}
	raw, err := s.open(ctx, t)
	if err != nil {
		return nil, err
	}
	now := s.now()
	step, ok := matchStep(raw, code, now)
	if !ok {
		return nil, errWrongCode
	}
	codes, hashes := newRecoveryCodes()
	ev := quire.NewEvent(quire.ActionMFAEnabled, now, quire.EventActorOf(a), a.Request).
		On(quire.TargetUser, a.User.ID, a.User.Name).With("method", "totp")
	err = s.recording(ev).ConfirmTOTP(ctx, a.User.ID, t.Secret, step, hashes, now)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, errNoSetup // begun again or switched off meanwhile
	}
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// Status is where the actor's second factor stands, for the Account page.
type Status struct {
	On            bool // a confirmed TOTP
	Waiting       bool // a set-up waits for its confirmation
	RecoveryCodes int  // unused recovery codes left
}

// Status returns where the actor's second factor stands.
func (s *Service) Status(ctx context.Context, a quire.Actor) (Status, error) {
	t, err := s.store.TOTP(ctx, a.User.ID)
	switch {
	case quire.ErrorCode(err) == quire.ENOTFOUND:
		return Status{}, nil
	case err != nil:
		return Status{}, err
	case t.ConfirmedAt.IsZero():
		return Status{Waiting: true}, nil
	}
	codes, err := s.store.RecoveryCodes(ctx, a.User.ID)
	return Status{On: true, RecoveryCodes: len(codes)}, err
}

// Enabled reports whether the user has a confirmed TOTP: a password
// sign-in then needs a second step.
func (s *Service) Enabled(ctx context.Context, userID string) (bool, error) {
	t, err := s.store.TOTP(ctx, userID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !t.ConfirmedAt.IsZero(), nil
}

// Check reports whether code is right for the user's confirmed TOTP: a
// code of the authenticator not accepted before, or an unused recovery
// code. A code it accepts is used up.
func (s *Service) Check(ctx context.Context, userID, code string) (bool, error) {
	if isTOTPCode(code) {
		t, err := s.store.TOTP(ctx, userID)
		if quire.ErrorCode(err) == quire.ENOTFOUND {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if t.ConfirmedAt.IsZero() {
			return false, nil
		}
		raw, err := s.open(ctx, t)
		if err != nil {
			return false, err
		}
		step, ok := matchStep(raw, code, s.now())
		if !ok || step <= t.LastStep {
			return false, nil
		}
		return s.store.UseTOTPStep(ctx, userID, step)
	}
	want := recoveryHash(code)
	codes, err := s.store.RecoveryCodes(ctx, userID)
	if err != nil {
		return false, err
	}
	id := ""
	for _, c := range codes {
		// Every stored code is compared, in constant time each.
		if subtle.ConstantTimeCompare(c.CodeHash, want) == 1 {
			id = c.ID
		}
	}
	if id == "" || want == nil {
		return false, nil
	}
	return s.store.UseRecoveryCode(ctx, userID, id, s.now())
}

// Remove switches the user's TOTP off (or drops a waiting set-up), with
// its recovery codes and unused mfa tokens, recording ev when a TOTP was
// on. Package auth calls it once the password is checked.
func (s *Service) Remove(ctx context.Context, userID string, ev *quire.Event) (bool, error) {
	return s.recording(ev).DeleteTOTP(ctx, userID)
}

// Reset is an administrator's removal of a user's second factor (the user
// lost the authenticator and the recovery codes), recorded as
// auth.mfa_reset when there was one. FORBIDDEN for anyone else; ENOTFOUND
// for an unknown user.
func (s *Service) Reset(ctx context.Context, admin quire.Actor, userID string) error {
	if !admin.User.Role.Admin {
		return quire.Errorf(quire.EFORBIDDEN, "Only an administrator may do this")
	}
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return err
	}
	ev := quire.NewEvent(quire.ActionMFAReset, s.now(), quire.EventActorOf(admin), admin.Request).
		On(quire.TargetUser, u.ID, u.Name).With("email", u.Email)
	_, err = s.Remove(ctx, u.ID, ev)
	return err
}

// ResetByCLI is Reset by the admin CLI (quire user reset-mfa), recorded
// with no actor and "via": "cli". ENOTFOUND for an unknown user.
func (s *Service) ResetByCLI(ctx context.Context, userID string) error {
	u, err := s.store.UserByID(ctx, userID)
	if err != nil {
		return err
	}
	ev := quire.CLIEvent(quire.ActionMFAReset, s.now()).On(quire.TargetUser, u.ID, u.Name).With("email", u.Email)
	_, err = s.Remove(ctx, u.ID, ev)
	return err
}

// isTOTPCode reports whether code is six digits (spaces allowed, as apps
// show "123 456"); anything else is taken for a recovery code.
func isTOTPCode(code string) bool {
	c := strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(c) != 6 {
		return false
	}
	for i := 0; i < len(c); i++ {
		if c[i] < '0' || c[i] > '9' {
			return false
		}
	}
	return true
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// matchStep returns the latest time step within one step of now whose
// code is code, comparing each in constant time.
func matchStep(raw []byte, code string, now time.Time) (int64, bool) {
	if !isTOTPCode(code) {
		return 0, false
	}
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	secret := b32.EncodeToString(raw)
	counter := now.Unix() / period
	var (
		step  int64
		found bool
	)
	for c := counter - skew; c <= counter+skew; c++ {
		want, err := hotp.GenerateCodeCustom(secret, uint64(c), hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			continue
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			step, found = c, true
		}
	}
	return step, found
}

// Recovery codes are 16 characters of lower-case base32 (80 bits), shown
// in four groups of four. They are compared without case, spaces or
// dashes.
const recoveryLength = 16

var recoveryAlphabet = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newRecoveryCodes() (codes []string, hashes [][]byte) {
	for range RecoveryCodes {
		b := make([]byte, 10)
		rand.Read(b)
		c := recoveryAlphabet.EncodeToString(b) // 16 characters
		codes = append(codes, c[0:4]+"-"+c[4:8]+"-"+c[8:12]+"-"+c[12:16])
		hashes = append(hashes, recoveryHash(c))
	}
	return codes, hashes
}

// recoveryHash is how a recovery code is stored and compared: SHA-256 of
// its normal form (80 random bits need no slow hash). nil when code cannot
// be one.
func recoveryHash(code string) []byte {
	if len(code) > 64 {
		return nil
	}
	c := strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(code)))
	if len(c) != recoveryLength {
		return nil
	}
	sum := sha256.Sum256([]byte(c))
	return sum[:]
}
