package httpapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/auth"
	"quire/passkey"
)

// softKey is a software authenticator holding one discoverable credential:
// it answers the options quire's begin endpoints give as a browser and a
// platform authenticator would (packed in "none" attestation, ES256), so
// that the HTTP tests drive real ceremonies that the WebAuthn library
// verifies.
type softKey struct {
	t          testing.TB
	rpID       string
	origin     string
	credID     []byte
	key        *ecdsa.PrivateKey
	userHandle []byte
	count      uint32
	noCounter  bool // signs with count 0 always, as synced passkeys do
}

const passkeyOrigin = "https://quire.test"

func newSoftKey(t testing.TB) *softKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &softKey{t: t, rpID: "quire.test", origin: passkeyOrigin, credID: id, key: key}
}

var b64 = base64.RawURLEncoding

// challengeOf reads publicKey.challenge (and publicKey.user.id, when there
// is one) from a begin answer.
func challengeOf(t testing.TB, r *resp) (challenge string, userID []byte) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("begin: %d %s", r.Status, r.Body)
	}
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			User      struct {
				ID string `json:"id"`
			} `json:"user"`
		} `json:"publicKey"`
	}
	r.decode(t, &o)
	if o.PublicKey.User.ID != "" {
		var err error
		if userID, err = b64.DecodeString(o.PublicKey.User.ID); err != nil {
			t.Fatalf("user id %q: %v", o.PublicKey.User.ID, err)
		}
	}
	return o.PublicKey.Challenge, userID
}

func (k *softKey) authData(flags byte, attested []byte) []byte {
	rp := sha256.Sum256([]byte(k.rpID))
	out := append(rp[:], flags)
	out = binary.BigEndian.AppendUint32(out, k.count)
	return append(out, attested...)
}

// create answers a registration's options.
func (k *softKey) create(challenge string, userID []byte) map[string]any {
	k.t.Helper()
	k.userHandle = userID
	clientData, _ := json.Marshal(map[string]any{"type": "webauthn.create", "challenge": challenge, "origin": k.origin, "crossOrigin": false})
	point, err := k.key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		k.t.Fatal(err)
	}
	pub := webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: 2, Algorithm: -7},
		Curve:         1,
		XCoord:        point[1:33],
		YCoord:        point[33:65],
	}
	cose, err := webauthncbor.Marshal(pub)
	if err != nil {
		k.t.Fatal(err)
	}
	attested := make([]byte, 16) // AAGUID: none
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(k.credID)))
	attested = append(append(attested, k.credID...), cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": k.authData(0x45, attested)})
	if err != nil {
		k.t.Fatal(err)
	}
	return k.credential(map[string]any{
		"clientDataJSON":    b64.EncodeToString(clientData),
		"attestationObject": b64.EncodeToString(att),
		"transports":        []string{"internal"},
	})
}

// credential is the PublicKeyCredential of k that carries response.
func (k *softKey) credential(response map[string]any) map[string]any {
	return map[string]any{
		"id": b64.EncodeToString(k.credID), "rawId": b64.EncodeToString(k.credID), "type": "public-key",
		"response":               response,
		"clientExtensionResults": map[string]any{},
	}
}

// get answers a sign-in's challenge, signing with the next sign count.
func (k *softKey) get(challenge string) map[string]any {
	k.t.Helper()
	if !k.noCounter {
		k.count++
	}
	return k.assert(challenge, 0x05) // UP and UV
}

// assert answers a sign-in's challenge with authenticator data of those
// flags, signed with k's key at its current sign count.
func (k *softKey) assert(challenge string, flags byte) map[string]any {
	k.t.Helper()
	clientData, _ := json.Marshal(map[string]any{"type": "webauthn.get", "challenge": challenge, "origin": k.origin, "crossOrigin": false})
	ad := k.authData(flags, nil)
	cdh := sha256.Sum256(clientData)
	digest := sha256.Sum256(append(append([]byte{}, ad...), cdh[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, digest[:])
	if err != nil {
		k.t.Fatal(err)
	}
	return k.credential(map[string]any{
		"clientDataJSON":    b64.EncodeToString(clientData),
		"authenticatorData": b64.EncodeToString(ad),
		"signature":         b64.EncodeToString(sig),
		"userHandle":        b64.EncodeToString(k.userHandle),
	})
}

// newChallenge is a challenge quire never issued.
func newChallenge() string {
	b := make([]byte, 32)
	rand.Read(b)
	return b64.EncodeToString(b)
}

// withPasskeys runs the env with a public URL that can be a relying party.
func withPasskeys(limits func(*quire.LoginLimits)) envOption {
	return withAuthConfig(func(c *auth.Config) {
		c.PublicURL = passkeyOrigin
		if limits != nil {
			limits(&c.Limits)
		}
	})
}

type passkeyWire struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	CreatedAt  string   `json:"createdAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
	Transports []string `json:"transports"`
}

// registerPasskey registers k for the holder of session under name.
func (e *env) registerPasskey(session, name string, k *softKey) passkeyWire {
	e.t.Helper()
	ch, uid := challengeOf(e.t, e.do("POST", "/api/auth/passkeys/register/begin", bearer(session)))
	r := e.do("POST", "/api/auth/passkeys/register/finish", bearer(session),
		jsonBody(map[string]any{"name": name, "credential": k.create(ch, uid)}))
	return wantMember[passkeyWire](e.t, r, http.StatusCreated, "passkey")
}

// passkeyLogin begins a sign-in from addr and answers it with k.
func (e *env) passkeyLogin(k *softKey, addr string) *resp {
	e.t.Helper()
	return e.passkeyLoginAnswered(k.get, addr)
}

// passkeyLoginAnswered begins a sign-in from addr and finishes it with the
// credential answer gives for its challenge.
func (e *env) passkeyLoginAnswered(answer func(challenge string) map[string]any, addr string) *resp {
	e.t.Helper()
	ch, _ := challengeOf(e.t, e.do("POST", "/api/auth/passkeys/login/begin", fromAddr(addr)))
	return e.do("POST", "/api/auth/passkeys/login/finish", fromAddr(addr), jsonBody(map[string]any{"credential": answer(ch)}))
}

func (e *env) passkeys(session string) []passkeyWire {
	e.t.Helper()
	return wantMember[[]passkeyWire](e.t, e.do("GET", "/api/auth/passkeys", bearer(session)), http.StatusOK, "passkeys")
}

// events returns the audit events of action, newest first.
func (e *env) events(action string) []quire.Event {
	e.t.Helper()
	evs, err := e.store.AuditEvents(context.Background(), quire.AuditFilter{Action: action, Limit: 50})
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

// adaWithLaptopKey is a new env with passkeys on and ada, an editor, who
// has registered k as "Laptop".
func adaWithLaptopKey(t *testing.T) (e *env, ada quire.User, k *softKey) {
	t.Helper()
	e = newEnv(t, withPasskeys(nil))
	ada = e.user("ada@example.com", "editor", "")
	k = newSoftKey(t)
	e.registerPasskey(e.login("ada@example.com"), "Laptop", k)
	return e, ada, k
}

func TestPasskeys(t *testing.T) {
	t.Parallel()
	t.Run("a registered passkey signs its user in alone, with an ordinary session", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, withPasskeys(nil))
		ada := e.user("ada@example.com", "editor", "")
		session := e.login("ada@example.com")
		k := newSoftKey(t)
		p := e.registerPasskey(session, "  Laptop  ", k)
		if p.Name != "Laptop" || p.LastUsedAt != nil || len(p.Transports) != 1 || p.Transports[0] != "internal" {
			t.Errorf("registered %+v", p)
		}
		if got := e.passkeys(session); len(got) != 1 || got[0].ID != p.ID {
			t.Errorf("list = %+v", got)
		}

		e.clock.Advance(time.Minute)
		r := e.passkeyLogin(k, "127.0.0.2")
		if r.Status != http.StatusOK {
			t.Fatalf("passkey login: %d %s", r.Status, r.Body)
		}
		var body struct {
			AccessToken string `json:"accessToken"`
			User        struct {
				ID string `json:"id"`
			} `json:"user"`
		}
		r.decode(t, &body)
		if body.User.ID != ada.ID || body.AccessToken == "" {
			t.Fatalf("login answer %s", r.Body)
		}
		if c := r.Header.Get("Set-Cookie"); c == "" {
			t.Error("no session cookie")
		}
		if me := e.do("GET", "/api/auth/me", bearer(body.AccessToken)); me.Status != http.StatusOK {
			t.Fatalf("me with the passkey session: %d", me.Status)
		}
		if got := e.passkeys(session); got[0].LastUsedAt == nil {
			t.Error("lastUsedAt not set by the sign-in")
		}
		logins := e.events(quire.ActionLogin)
		if len(logins) == 0 || logins[0].Details["method"] != "passkey" || logins[0].Target.ID != ada.ID {
			t.Errorf("auth.login events %+v", logins)
		}
		if evs := e.events(quire.ActionPasskeyRegistered); len(evs) != 1 || evs[0].Target.ID != p.ID || evs[0].Actor.ID != ada.ID {
			t.Errorf("passkey.registered events %+v", evs)
		}
		// The session is revoked as any other.
		if r := e.do("POST", "/api/auth/logout", bearer(body.AccessToken)); r.Status != http.StatusOK {
			t.Fatalf("logout: %d", r.Status)
		}
		e.wantError(e.do("GET", "/api/auth/me", bearer(body.AccessToken)), 401, "UNAUTHORIZED")
	})

	t.Run("an answer given twice signs in once", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withPasskeys(nil))
		// Without a sign count, only the single use of the challenge
		// refuses the second answer.
		k := newSoftKey(t)
		k.noCounter = true
		e.registerPasskey(e.login("ada@example.com"), "Laptop", k)
		ch, _ := challengeOf(t, e.do("POST", "/api/auth/passkeys/login/begin"))
		answer := jsonBody(map[string]any{"credential": k.get(ch)})
		if r := e.do("POST", "/api/auth/passkeys/login/finish", answer); r.Status != http.StatusOK {
			t.Fatalf("first: %d %s", r.Status, r.Body)
		}
		e.wantError(e.do("POST", "/api/auth/passkeys/login/finish", answer), 401, "INVALID_CREDENTIALS")
	})

	t.Run("a challenge quire never issued, or one expired, is refused", func(t *testing.T) {
		t.Parallel()
		e, _, k := adaWithLaptopKey(t)
		e.wantError(e.do("POST", "/api/auth/passkeys/login/finish",
			jsonBody(map[string]any{"credential": k.get(newChallenge())})), 401, "INVALID_CREDENTIALS")

		ch, _ := challengeOf(t, e.do("POST", "/api/auth/passkeys/login/begin"))
		e.clock.Advance(5*time.Minute + time.Second)
		e.wantError(e.do("POST", "/api/auth/passkeys/login/finish",
			jsonBody(map[string]any{"credential": k.get(ch)})), 401, "INVALID_CREDENTIALS")
	})

	t.Run("an unknown credential is refused", func(t *testing.T) {
		t.Parallel()
		e, _, _ := adaWithLaptopKey(t)
		stranger := newSoftKey(t)
		stranger.userHandle = []byte("someone")
		e.wantError(e.passkeyLogin(stranger, ""), 401, "INVALID_CREDENTIALS")
	})

	t.Run("a sign count that does not increase is refused (a cloned authenticator)", func(t *testing.T) {
		t.Parallel()
		e, _, k := adaWithLaptopKey(t)
		if r := e.passkeyLogin(k, ""); r.Status != http.StatusOK {
			t.Fatalf("first: %d %s", r.Status, r.Body)
		}
		k.count-- // the clone signs with the count the original used
		e.wantError(e.passkeyLogin(k, ""), 401, "INVALID_CREDENTIALS")
	})

	t.Run("a signature by another key is a failed sign-in of the user", func(t *testing.T) {
		t.Parallel()
		e, ada, k := adaWithLaptopKey(t)
		forged := newSoftKey(t)
		forged.credID, forged.userHandle = k.credID, k.userHandle
		e.wantError(e.passkeyLogin(forged, ""), 401, "INVALID_CREDENTIALS")
		evs := e.events(quire.ActionLoginFailed)
		if len(evs) != 1 || evs[0].Details["reason"] != "passkey" || evs[0].Target == nil || evs[0].Target.ID != ada.ID {
			t.Errorf("auth.login_failed events %+v", evs)
		}
	})

	t.Run("a disabled user is refused", func(t *testing.T) {
		t.Parallel()
		e, ada, k := adaWithLaptopKey(t)
		if err := e.store.DisableUser(context.Background(), ada.ID, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		e.wantError(e.passkeyLogin(k, ""), 401, "INVALID_CREDENTIALS")
		if evs := e.events(quire.ActionLoginFailed); len(evs) != 1 || evs[0].Details["reason"] != "disabled" {
			t.Errorf("auth.login_failed events %+v", evs)
		}
	})

	t.Run("failed assertions count per address, and a full window refuses even a good passkey", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withPasskeys(func(l *quire.LoginLimits) { l.Limit = 3 }))
		k := newSoftKey(t)
		e.registerPasskey(e.login("ada@example.com"), "Laptop", k)
		for range 3 {
			e.wantError(e.do("POST", "/api/auth/passkeys/login/finish", fromAddr("127.0.0.3"),
				jsonBody(map[string]any{"credential": newSoftKey(t).get(newChallenge())})), 401, "INVALID_CREDENTIALS")
		}
		r := e.passkeyLogin(k, "127.0.0.3")
		e.wantError(r, 429, "TOO_MANY_ATTEMPTS")
		if r.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		// Another address is not refused.
		if r := e.passkeyLogin(k, "127.0.0.4"); r.Status != http.StatusOK {
			t.Fatalf("from another address: %d %s", r.Status, r.Body)
		}
		// The window passes.
		e.clock.Advance(16 * time.Minute)
		if r := e.passkeyLogin(k, "127.0.0.3"); r.Status != http.StatusOK {
			t.Fatalf("after the window: %d %s", r.Status, r.Body)
		}
	})

	t.Run("failed assertions of a user's credential lock the user's email, for passwords too", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withPasskeys(func(l *quire.LoginLimits) { l.LockThreshold = 2 }))
		k := newSoftKey(t)
		e.registerPasskey(e.login("ada@example.com"), "Laptop", k)
		forged := newSoftKey(t)
		forged.credID, forged.userHandle = k.credID, k.userHandle
		e.wantError(e.passkeyLogin(forged, "127.0.0.5"), 401, "INVALID_CREDENTIALS")
		e.wantError(e.passkeyLogin(forged, "127.0.0.6"), 401, "INVALID_CREDENTIALS")
		e.wantError(e.passkeyLogin(k, "127.0.0.7"), 429, "ACCOUNT_LOCKED")
		e.wantError(e.do("POST", "/api/auth/login", fromAddr("127.0.0.7"),
			jsonBody(map[string]string{"email": "ada@example.com", "password": testPassword})), 429, "ACCOUNT_LOCKED")
		if evs := e.events(quire.ActionLocked); len(evs) != 1 {
			t.Errorf("auth.locked events %+v", evs)
		}
	})

	t.Run("begins from one address never lock it out: its oldest ceremonies make room", func(t *testing.T) {
		t.Parallel()
		e, _, k := adaWithLaptopKey(t)
		// An office behind one address: someone began a sign-in, then
		// anonymous begins from the same address, more than it may hold.
		first, _ := challengeOf(t, e.do("POST", "/api/auth/passkeys/login/begin", fromAddr("127.0.0.8")))
		for range 3 * passkey.CeremoniesPerAddr {
			challengeOf(t, e.do("POST", "/api/auth/passkeys/login/begin", fromAddr("127.0.0.8")))
		}
		// Everyone behind it still signs in.
		if r := e.passkeyLogin(k, "127.0.0.8"); r.Status != http.StatusOK {
			t.Fatalf("a sign-in behind the busy address: %d %s", r.Status, r.Body)
		}
		// The first ceremony made room: the address holds a bounded number.
		e.wantError(e.do("POST", "/api/auth/passkeys/login/finish", fromAddr("127.0.0.8"),
			jsonBody(map[string]any{"credential": k.get(first)})), 401, "INVALID_CREDENTIALS")
	})

	t.Run("a registration answers only its own user's ceremony, once", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withPasskeys(nil))
		e.user("bob@example.com", "editor", "")
		ada, bob := e.login("ada@example.com"), e.login("bob@example.com")
		ch, uid := challengeOf(t, e.do("POST", "/api/auth/passkeys/register/begin", bearer(ada)))
		k := newSoftKey(t)
		body := jsonBody(map[string]any{"credential": k.create(ch, uid)})
		r := e.do("POST", "/api/auth/passkeys/register/finish", bearer(bob), body)
		if f := e.wantError(r, 400, "VALIDATION_ERROR"); f["fields"].(map[string]any)["credential"] == nil {
			t.Errorf("fields %v", f)
		}
		// Bob's attempt used Ada's ceremony up: her own finish finds none.
		e.wantError(e.do("POST", "/api/auth/passkeys/register/finish", bearer(ada), body), 400, "VALIDATION_ERROR")
		if got := e.passkeys(ada); len(got) != 0 {
			t.Errorf("ada's passkeys %+v", got)
		}
		// A fresh ceremony works, and the same authenticator again is refused.
		e.registerPasskey(ada, "", k)
		ch, uid = challengeOf(t, e.do("POST", "/api/auth/passkeys/register/begin", bearer(ada)))
		e.wantError(e.do("POST", "/api/auth/passkeys/register/finish", bearer(ada),
			jsonBody(map[string]any{"credential": k.create(ch, uid)})), 400, "VALIDATION_ERROR")
		if got := e.passkeys(ada); len(got) != 1 || got[0].Name != "Passkey" {
			t.Errorf("ada's passkeys %+v", got)
		}
	})

	t.Run("a passkey is renamed and removed by its user alone", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withPasskeys(nil))
		e.user("bob@example.com", "editor", "")
		ada, bob := e.login("ada@example.com"), e.login("bob@example.com")
		k := newSoftKey(t)
		p := e.registerPasskey(ada, "Laptop", k)
		e.wantError(e.do("PATCH", "/api/auth/passkeys/"+p.ID, bearer(bob), jsonBody(map[string]string{"name": "Mine"})), 404, "NOT_FOUND")
		e.wantError(e.do("DELETE", "/api/auth/passkeys/"+p.ID, bearer(bob)), 404, "NOT_FOUND")
		e.wantError(e.do("PATCH", "/api/auth/passkeys/"+p.ID, bearer(ada), jsonBody(map[string]string{"name": " "})), 400, "VALIDATION_ERROR")
		e.clock.Advance(time.Second)
		r := e.do("PATCH", "/api/auth/passkeys/"+p.ID, bearer(ada), jsonBody(map[string]string{"name": "Work laptop"}))
		if r.Status != http.StatusOK {
			t.Fatalf("rename: %d %s", r.Status, r.Body)
		}
		if got := e.passkeys(ada); got[0].Name != "Work laptop" {
			t.Errorf("after rename %+v", got)
		}
		e.clock.Advance(time.Second)
		if r := e.do("DELETE", "/api/auth/passkeys/"+p.ID, bearer(ada)); r.Status != http.StatusOK {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		if evs := e.events(quire.ActionPasskeyRemoved); len(evs) != 1 || evs[0].Target.ID != p.ID {
			t.Errorf("passkey.removed events %+v", evs)
		}
		e.wantError(e.passkeyLogin(k, ""), 401, "INVALID_CREDENTIALS")

		// The audit log lists them as the OpenAPI document says.
		e.user("root@example.com", "admin", "")
		r = e.do("GET", "/api/admin/audit?action=passkey.", bearer(e.login("root@example.com")))
		var log struct {
			Events []struct {
				Action string `json:"action"`
			} `json:"events"`
		}
		r.decode(t, &log)
		var actions []string
		for _, ev := range log.Events {
			actions = append(actions, ev.Action)
		}
		if diff := cmp.Diff([]string{"passkey.removed", "passkey.renamed", "passkey.registered"}, actions); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})

	t.Run("an API token manages no passkeys", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withPasskeys(nil))
		_, secret := e.newAPIToken(e.login("ada@example.com"), "ci", "write")
		e.wantError(e.do("GET", "/api/auth/passkeys", bearer(secret)), 403, "FORBIDDEN")
		e.wantError(e.do("POST", "/api/auth/passkeys/register/begin", bearer(secret)), 403, "FORBIDDEN")
	})

	t.Run("a sign-in is refused cross-origin", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, withPasskeys(nil))
		e.wantError(e.do("POST", "/api/auth/passkeys/login/begin", header("Sec-Fetch-Site", "cross-site")), 403, "CROSS_ORIGIN")
		e.wantError(e.do("POST", "/api/auth/passkeys/login/finish", header("Sec-Fetch-Site", "cross-site"),
			jsonBody(map[string]any{"credential": map[string]any{}})), 403, "CROSS_ORIGIN")
	})

	t.Run("a malformed answer is a validation error", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, withPasskeys(nil))
		r := e.do("POST", "/api/auth/passkeys/login/finish", jsonBody(map[string]any{"credential": map[string]any{"id": "x"}}))
		e.wantError(r, 400, "VALIDATION_ERROR")
		e.wantError(e.do("POST", "/api/auth/passkeys/login/finish", jsonBody(map[string]any{})), 400, "VALIDATION_ERROR")
	})

	t.Run("with a public URL that is an address, passkeys are unavailable and say why", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t, withAuthConfig(func(c *auth.Config) { c.PublicURL = "http://127.0.0.1:8080" }))
		body := e.wantError(e.do("POST", "/api/auth/passkeys/login/begin"), 404, "NOT_FOUND")
		if m, _ := body["message"].(string); m == "" || m == "Not found" {
			t.Errorf("message %q", m)
		}
		e.wantError(e.do("POST", "/api/auth/passkeys/register/begin", bearer(e.login("ada@example.com"))), 404, "NOT_FOUND")
	})
}
