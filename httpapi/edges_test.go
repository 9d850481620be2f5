package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire"
)

// TestWebhookRegistrationRefusesIPv6FormsOfPrivateAddresses: the IPv6
// forms that embed or stand for an internal IPv4 address, or that name a
// site's own network, are refused like the addresses they stand for.
func TestWebhookRegistrationRefusesIPv6FormsOfPrivateAddresses(t *testing.T) {
	t.Parallel()
	e, admin := newSignedIn(t, "admin", "root@example.com")
	for _, url := range []string{
		"http://[::127.0.0.1]/hook",         // IPv4-compatible (::/96)
		"http://[::a9fe:a9fe]/hook",         // ::169.254.169.254
		"http://[::808:808]/hook",           // ::8.8.8.8, still IPv4-compatible
		"http://[fec0::1]/hook",             // site-local
		"http://[feff:ffff::1]/hook",        // end of fec0::/10
		"http://[2001:0:4136:e378::1]/hook", // Teredo
		"http://[2001:0:ffff:ffff::1]/hook", // end of 2001::/32
	} {
		body := e.wantError(e.do("POST", "/api/admin/webhooks", bearer(admin),
			jsonBody(map[string]any{"url": url, "events": []string{"*"}})), http.StatusBadRequest, quire.EVALIDATION)
		if fields, _ := body["fields"].(map[string]any); fields["url"] == nil {
			t.Errorf("%s: refusal %v does not name url", url, body)
		}
	}
	// Public IPv6 just beside those blocks is taken.
	for _, url := range []string{"https://[2001:4860:4860::8888]/hook", "https://[2606:4700::1111]/hook"} {
		r := e.do("POST", "/api/admin/webhooks", bearer(admin), jsonBody(map[string]any{"url": url, "events": []string{"*"}}))
		if r.Status != http.StatusCreated {
			t.Errorf("%s: %d %s", url, r.Status, r.Body)
		}
	}
}

// TestOpenAPIDeclaresWhatTheEdgesAnswer: every operation with a path
// parameter declares the 404 a path outside the parameter's shape gets;
// the download's bytes have a binary schema (generated clients read them
// as bytes, not as JSON); the TOTP set-up declares the optional body
// clients send.
func TestOpenAPIDeclaresWhatTheEdgesAnswer(t *testing.T) {
	sp, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range sp.doc.Paths.Map() {
		if !strings.Contains(path, "{") {
			continue
		}
		for method, op := range item.Operations() {
			if op.Responses.Status(http.StatusNotFound) == nil {
				t.Errorf("%s %s (%s) has a path parameter but declares no 404", method, path, op.OperationID)
			}
		}
	}

	dl := sp.doc.Paths.Find("/api/documentation/attachments/{id}/content").Get
	for _, status := range []int{http.StatusOK, http.StatusPartialContent} {
		r := dl.Responses.Status(status)
		if r == nil || r.Value == nil {
			t.Fatalf("download declares no %d", status)
		}
		for mt, c := range r.Value.Content {
			if c.Schema == nil || c.Schema.Value == nil || !c.Schema.Value.Type.Is("string") || c.Schema.Value.Format != "binary" {
				t.Errorf("download %d %s: the schema is not {type: string, format: binary}", status, mt)
			}
		}
	}

	totp := sp.doc.Paths.Find("/api/auth/mfa/totp").Post
	if rb := totp.RequestBody; rb == nil || rb.Value == nil || rb.Value.Required || rb.Value.Content.Get("application/json") == nil {
		t.Errorf("POST /api/auth/mfa/totp declares no optional JSON body")
	}
}

// TestTOTPSetUpTakesAnEmptyObject: a client that sends {} with its POST
// (as many do) gets the set-up, as one that sends nothing does.
func TestTOTPSetUpTakesAnEmptyObject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i, opt := range []reqOpt{jsonBody(map[string]any{}), header("X-Nothing", "1")} {
		u := e.user(fmt.Sprintf("t%d@example.com", i), "editor", "")
		tok := e.login(u.Email)
		r := e.do("POST", "/api/auth/mfa/totp", bearer(tok), opt)
		if r.Status != http.StatusOK {
			t.Errorf("body %d: %d %s", i, r.Status, r.Body)
		}
	}
	// A body that is sent is one JSON object, as everywhere else.
	tok := e.login(e.user("bad@example.com", "editor", "").Email)
	e.wantError(e.do("POST", "/api/auth/mfa/totp", bearer(tok), rawBody("[1]"), header("Content-Type", "application/json")),
		http.StatusBadRequest, quire.EINVALIDJSON)
	e.wantError(e.do("POST", "/api/auth/mfa/totp", bearer(tok), rawBody("x=1"), header("Content-Type", "application/x-www-form-urlencoded")),
		http.StatusUnsupportedMediaType, quire.EUNSUPPORTEDMEDIATYPE)
}

// TestDownloadRangesAreMergedAndFew: a download serves at most
// attachments.MaxRanges ranges, merged where they overlap or touch and in
// ascending order; more (the 6,668, one chunk query each) get the
// whole file, 200, as RFC 9110 allows.
func TestDownloadRangesAreMergedAndFew(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	doc := fx.create(ada, map[string]any{"title": "Ranges"})
	big := bytes.Repeat([]byte("0123456789abcdef"), 300_000/16) // two chunks
	a := fx.upload(ada, doc.ID, "big.txt", big)
	size := len(big)

	t.Run("overlapping and touching ranges are served as one", func(t *testing.T) {
		fx := fx.in(t)
		for _, c := range []struct {
			rng      string
			from, to int
		}{
			{"bytes=0-9,5-19,20-29", 0, 29},
			{"bytes=100-199, 0-149", 0, 199},
			{"bytes=-10,0-", 0, size - 1},
			{fmt.Sprintf("bytes=%d-%d,%d-%d", size-20, size+100, size-30, size-15), size - 30, size - 1},
		} {
			r := fx.do("GET", a.URL, bearer(ada), header("Range", c.rng))
			if r.Status != http.StatusPartialContent || !bytes.Equal(r.Body, big[c.from:c.to+1]) {
				t.Errorf("%s: %d with %d bytes (%.40q), want 206 and bytes %d-%d", c.rng, r.Status, len(r.Body), r.Body, c.from, c.to)
			}
			if got, want := r.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", c.from, c.to, size); got != want {
				t.Errorf("%s: Content-Range %q, want %q", c.rng, got, want)
			}
		}
	})

	spread := func(n int) string {
		var b strings.Builder
		b.WriteString("bytes=")
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d-%d", 4*i, 4*i+1)
		}
		return b.String()
	}

	t.Run("eight separate ranges are served as ranges", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("GET", a.URL, bearer(ada), header("Range", spread(8)))
		if r.Status != http.StatusPartialContent {
			t.Fatalf("8 ranges: %d, want 206", r.Status)
		}
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/byteranges" {
			t.Fatalf("8 ranges: Content-Type %q", r.Header.Get("Content-Type"))
		}
		mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
		parts := 0
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(p)
			if want := big[4*parts : 4*parts+2]; !bytes.Equal(body, want) {
				t.Errorf("part %d: %q, want %q", parts, body, want)
			}
			parts++
		}
		if parts != 8 {
			t.Errorf("%d parts, want 8", parts)
		}
	})

	t.Run("more than eight ranges get the whole file", func(t *testing.T) {
		fx := fx.in(t)
		for _, n := range []int{9, 6668} {
			r := fx.do("GET", a.URL, bearer(ada), header("Range", spread(n)))
			if r.Status != http.StatusOK || !bytes.Equal(r.Body, big) {
				t.Errorf("%d ranges: %d with %d bytes, want 200 and the whole file of %d", n, r.Status, len(r.Body), size)
			}
		}
	})

	t.Run("a range with no byte of the file is 416, a malformed header is ignored", func(t *testing.T) {
		fx := fx.in(t)
		for _, rng := range []string{fmt.Sprintf("bytes=%d-", size+10), "bytes=-0", fmt.Sprintf("bytes=%d-%d,%d-", size, size+5, size+1)} {
			r := fx.do("GET", a.URL, bearer(ada), header("Range", rng))
			if r.Status != http.StatusRequestedRangeNotSatisfiable || r.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", size) {
				t.Errorf("%s: %d, Content-Range %q, want 416 and bytes */%d", rng, r.Status, r.Header.Get("Content-Range"), size)
			}
		}
		for _, rng := range []string{"bytes=5-1", "bytes=x-y", "bytes=1", "lines=1-2", "bytes=--1", "bytes=,"} {
			if r := fx.do("GET", a.URL, bearer(ada), header("Range", rng)); r.Status != http.StatusOK || !bytes.Equal(r.Body, big) {
				t.Errorf("%s: %d with %d bytes, want 200 and the whole file", rng, r.Status, len(r.Body))
			}
		}
	})
}

// BenchmarkDownloadManyRanges is the download with 6,668 ranges,
// alternating between the file's two chunks (one chunk query per range
// before they were limited):
//
//	go test ./httpapi -run '^$' -bench DownloadManyRanges -args -stores=sqlite
func BenchmarkDownloadManyRanges(b *testing.B) {
	e := newEnv(b)
	tok := e.login(e.user("ada@example.com", "editor", "").Email)
	r := e.do("POST", docsPath, bearer(tok), jsonBody(map[string]any{"title": "Ranges", "content": "x"}))
	var doc struct {
		Document docWire `json:"document"`
	}
	r.decode(b, &doc)
	big := bytes.Repeat([]byte("0123456789abcdef"), 300_000/16)
	r = e.do("POST", attachmentsPath(doc.Document.ID), bearer(tok), fileBody("big.txt", big))
	var out struct {
		Attachment attachmentWire `json:"attachment"`
	}
	r.decode(b, &out)
	var rng strings.Builder
	rng.WriteString("bytes=")
	for i := range 6668 {
		if i > 0 {
			rng.WriteByte(',')
		}
		o := i%2*quire.AttachmentChunkSize + 4*(i/2)
		fmt.Fprintf(&rng, "%d-%d", o, o+1)
	}
	b.ResetTimer()
	for b.Loop() {
		if r := e.do("GET", out.Attachment.URL, bearer(tok), header("Range", rng.String())); r.Status >= 300 {
			b.Fatalf("%d", r.Status)
		}
	}
}

// TestMFATokenIsVoidedByANewPassword: the mfaToken of a password step
// taken before the password was reset or changed no longer completes the
// sign-in (someone who knew the old password cannot finish with it), and
// one taken after does.
func TestMFATokenIsVoidedByANewPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const newPassword = "another long password 12345"

	t.Run("a reset", func(t *testing.T) {
		e := e.withT(t)
		m := e.enrol(t, e.user("reset@example.com", "editor", "").Email)
		stale := e.passwordStep(t, m.email)
		reset := forgotToken(t, e, m.email)
		if r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": reset, "password": newPassword})); r.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", r.Status, r.Body)
		}
		e.wantError(e.secondStep(stale, codeAt(t, m.secret, e.clock.Now())), http.StatusUnauthorized, quire.EINVALIDMFATOKEN)
	})

	t.Run("a change", func(t *testing.T) {
		e := e.withT(t)
		m := e.enrol(t, e.user("change@example.com", "editor", "").Email)
		stale := e.passwordStep(t, m.email)
		r := e.do("POST", "/api/auth/change-password", bearer(m.token),
			jsonBody(map[string]string{"currentPassword": testPassword, "newPassword": newPassword}))
		if r.Status != http.StatusOK {
			t.Fatalf("change: %d %s", r.Status, r.Body)
		}
		e.wantError(e.secondStep(stale, codeAt(t, m.secret, e.clock.Now())), http.StatusUnauthorized, quire.EINVALIDMFATOKEN)

		// The new password's own two steps sign in.
		r = e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": m.email, "password": newPassword}))
		var body struct {
			MFAToken string `json:"mfaToken"`
		}
		r.decode(t, &body)
		e.clock.Advance(30 * time.Second)
		if r := e.secondStep(body.MFAToken, codeAt(t, m.secret, e.clock.Now())); r.Status != http.StatusOK {
			t.Errorf("second step after the change: %d %s", r.Status, r.Body)
		}
	})
}

// passkeyNoUVMessage is the fixed message of INVALID_CREDENTIALS for a
// passkey without user verification standing in for a second factor.
const passkeyNoUVMessage = "This passkey did not verify you (with a PIN, fingerprint or face), and your account has a second factor: use a passkey that does, or sign in with your password and code."

// getWithoutUV answers a sign-in's challenge as an authenticator that
// checked presence but did not verify its user (no PIN, fingerprint or
// face): the UV flag is off.
func (k *softKey) getWithoutUV(challenge string) map[string]any {
	k.t.Helper()
	k.count++
	return k.assert(challenge, 0x01) // UP only
}

func (e *env) passkeyLoginWithoutUV(k *softKey, addr string) *resp {
	e.t.Helper()
	return e.passkeyLoginAnswered(k.getWithoutUV, addr)
}

// TestPasskeyWithoutUserVerificationIsNoSecondFactor: a passkey sign-in
// that did not verify its user proves possession only. For a user with a
// TOTP on, or whose role requires a second factor, it would stand in for
// both factors, so it is refused (and not counted); a verified one signs
// in. A user without a second factor signs in with either.
func TestPasskeyWithoutUserVerificationIsNoSecondFactor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPasskeys(nil))
	admin := e.login(e.user("root@example.com", "admin", "").Email)

	t.Run("a user with a TOTP on", func(t *testing.T) {
		e := e.withT(t)
		m := e.enrol(t, e.user("totp@example.com", "editor", "").Email)
		k := newSoftKey(t)
		e.registerPasskey(m.token, "Key", k)
		body := e.wantError(e.passkeyLoginWithoutUV(k, "127.0.0.7"), http.StatusUnauthorized, quire.EINVALIDCREDENTIALS)
		if msg, _ := body["message"].(string); msg != passkeyNoUVMessage {
			t.Errorf("message %q does not say what is missing", msg)
		}
		if r := e.passkeyLogin(k, "127.0.0.7"); r.Status != http.StatusOK {
			t.Errorf("with user verification: %d %s", r.Status, r.Body)
		}
	})

	t.Run("a user whose role requires a second factor", func(t *testing.T) {
		e := e.withT(t)
		if r := e.do("PUT", "/api/admin/roles/guarded", bearer(admin),
			jsonBody(map[string]any{"label": "Guarded", "docs": "view", "requireMfa": true})); r.Status != http.StatusOK {
			t.Fatalf("put role: %d %s", r.Status, r.Body)
		}
		u := e.user("guarded@example.com", "guarded", "")
		tok := e.login(u.Email)
		k := newSoftKey(t)
		e.registerPasskey(tok, "Key", k)
		e.wantError(e.passkeyLoginWithoutUV(k, "127.0.0.8"), http.StatusUnauthorized, quire.EINVALIDCREDENTIALS)
		if r := e.passkeyLogin(k, "127.0.0.8"); r.Status != http.StatusOK {
			t.Errorf("with user verification: %d %s", r.Status, r.Body)
		}
	})

	t.Run("a user without a second factor", func(t *testing.T) {
		e := e.withT(t)
		tok := e.login(e.user("plain@example.com", "editor", "").Email)
		k := newSoftKey(t)
		e.registerPasskey(tok, "Key", k)
		if r := e.passkeyLoginWithoutUV(k, "127.0.0.9"); r.Status != http.StatusOK {
			t.Errorf("without user verification: %d %s", r.Status, r.Body)
		}
	})
}
