// Package oidctest runs a real OpenID provider inside a test process:
// zitadel/oidc's certified provider package (pkg/op) over the smallest
// storage it needs (kept in memory), with a login page of its own. Tests of
// single sign-on drive it as a browser would: quire sends the browser to
// its authorization endpoint, its login page signs a user in, and it sends
// the browser back to quire with a code that quire exchanges at its token
// endpoint.
//
// The knobs (IDTokenLifetime, WrongNonce, ClaimsOnlyAtUserinfo) make the
// provider itself issue the tokens a careful client must refuse, signed
// with its own key; WrongAudience, which the provider cannot be made to
// issue, re-signs its token with that key (see there).
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is an account at the provider. ID is its subject ("sub").
type User struct {
	ID            string
	Username      string
	Password      string
	Email         string
	EmailVerified bool
	Name          string
}

// Provider is a running OpenID provider.
type Provider struct {
	Issuer       string
	ClientID     string
	ClientSecret string

	// WrongAudience makes the ID tokens name another audience than the
	// client they are issued to. zitadel's provider always adds the
	// requesting client to the audience, so this one case is made by
	// rewriting the token endpoint's answer: the ID token the provider
	// issued, with aud and azp replaced, signed again with the provider's
	// own key (so that only the audience is wrong).
	WrongAudience atomic.Bool
	// IDTokenLifetime, when not 0, is the lifetime of the ID tokens
	// (negative: already expired when issued); 0 is one hour.
	IDTokenLifetime atomic.Int64
	// WrongNonce makes the ID tokens carry another nonce than the one the
	// client sent.
	WrongNonce atomic.Bool
	// ClaimsOnlyAtUserinfo leaves email and name out of the ID token, as
	// some providers do: the client must ask the userinfo endpoint.
	ClaimsOnlyAtUserinfo atomic.Bool

	server  *httptest.Server
	storage *storage
}

// signingKeyOnce makes the providers' RSA key once per test process: under
// the race detector a 2048-bit key takes a second or more of CPU, and each
// provider has an issuer of its own (its own address), so sharing the key
// lets no provider's token pass for another's. The key never leaves the
// process.
var signingKeyOnce = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, 2048)
})

// Start starts a provider with one client (id "quire", secret
// "quire-secret") and users, stopped when the test ends. redirectURI is the
// client's registered redirect URI.
func Start(t testing.TB, redirectURI string, users ...User) *Provider {
	t.Helper()
	key, err := signingKeyOnce()
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{ClientID: "quire", ClientSecret: "quire-secret"}
	st := &storage{
		p:        p,
		key:      key,
		keyID:    "test-key",
		users:    map[string]*User{},
		requests: map[string]*authRequest{},
		codes:    map[string]string{},
		redirect: redirectURI,
	}
	for i := range users {
		u := users[i]
		st.users[u.ID] = &u
	}
	p.storage = st
	srv := httptest.NewUnstartedServer(nil)
	p.Issuer = "http://" + srv.Listener.Addr().String()
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:      sha256.Sum256([]byte("oidctest")),
		CodeMethodS256: true,
		AuthMethodPost: true,
	}, st, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	interceptor := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	callback := op.AuthCallbackURL(provider)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		renderLogin(w, r.URL.Query().Get("authRequestID"), "")
	})
	mux.HandleFunc("POST /login", interceptor.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PostFormValue("id")
		if err := st.checkLogin(r.PostFormValue("username"), r.PostFormValue("password"), id); err != nil {
			renderLogin(w, id, err.Error())
			return
		}
		http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
	}))
	mux.Handle("/", p.rewriteTokens(provider))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	p.server = srv
	return p
}

// SetUser adds or replaces a user.
func (p *Provider) SetUser(u User) {
	p.storage.mu.Lock()
	defer p.storage.mu.Unlock()
	p.storage.users[u.ID] = &u
}

// Client returns an HTTP client of the provider's server.
func (p *Provider) Client() *http.Client { return p.server.Client() }

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head>
<body><h1>Test identity provider</h1>
{{with .Error}}<p id="idp-error">{{.}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="id" value="{{.ID}}">
<label>Username <input id="idp-username" name="username"></label>
<label>Password <input id="idp-password" name="password" type="password"></label>
<button id="idp-sign-in" type="submit">Sign in</button>
</form></body></html>`))

func renderLogin(w http.ResponseWriter, id, errMsg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	loginPage.Execute(w, struct{ ID, Error string }{id, errMsg})
}

// storage is the provider's op.Storage, in memory.
type storage struct {
	p        *Provider
	key      *rsa.PrivateKey
	keyID    string
	redirect string

	mu       sync.Mutex
	users    map[string]*User        // by ID
	requests map[string]*authRequest // by ID
	codes    map[string]string       // code → request ID
	seq      int
}

func (s *storage) checkLogin(username, password, requestID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	req, ok := s.requests[requestID]
	if !ok {
		return errors.New("unknown sign-in request")
	}
	for _, u := range s.users {
		if u.Username == username && u.Password == password {
			req.subject, req.done, req.authTime = u.ID, true, time.Now()
			return nil
		}
	}
	return errors.New("wrong username or password")
}

type authRequest struct {
	id, clientID, redirectURI, state, nonce string
	scopes                                  []string
	responseType                            oidc.ResponseType
	responseMode                            oidc.ResponseMode
	challenge                               *oidc.CodeChallenge
	audience                                []string
	subject                                 string
	done                                    bool
	authTime                                time.Time
}

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAMR() []string                      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string                 { return a.audience }
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.challenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.responseMode }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.subject }
func (a *authRequest) Done() bool                            { return a.done }

func (s *storage) CreateAuthRequest(_ context.Context, r *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	req := &authRequest{
		id: fmt.Sprintf("req-%d", s.seq), clientID: r.ClientID, redirectURI: r.RedirectURI, state: r.State,
		nonce: r.Nonce, scopes: r.Scopes, responseType: r.ResponseType, responseMode: r.ResponseMode,
		audience: []string{r.ClientID},
	}
	if s.p.WrongNonce.Load() {
		req.nonce = "not-" + r.Nonce
	}
	if r.CodeChallenge != "" {
		req.challenge = &oidc.CodeChallenge{Challenge: r.CodeChallenge, Method: r.CodeChallengeMethod}
	}
	s.requests[req.id] = req
	return req, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req, ok := s.requests[id]
	if !ok {
		return nil, errors.New("request not found")
	}
	return req, nil
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("code invalid or used")
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest is called once the code was exchanged: the code goes
// with the request, so that it works once.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(context.Context, op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("at-%d", s.seq), time.Now().Add(5 * time.Minute), nil
}

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("refresh tokens are not supported")
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error { return nil }

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ signingKey }

func (k *publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *publicKey) Use() string                        { return "sig" }
func (k *publicKey) Key() any                           { return &k.key.PublicKey }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return &signingKey{id: s.keyID, key: s.key}, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{&publicKey{signingKey{id: s.keyID, key: s.key}}}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if id != s.p.ClientID {
		return nil, errors.New("client not found")
	}
	return &client{s: s}, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if id != s.p.ClientID || secret != s.p.ClientSecret {
		return errors.New("wrong client id or secret")
	}
	return nil
}

// SetUserinfoFromScopes fills the ID token's claims (and, through
// SetUserinfoFromToken, the userinfo endpoint's).
func (s *storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, userID, _ string, scopes []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[userID]
	if !ok {
		return errors.New("user not found")
	}
	for _, sc := range scopes {
		switch sc {
		case oidc.ScopeOpenID:
			info.Subject = u.ID
		case oidc.ScopeEmail:
			info.Email, info.EmailVerified = u.Email, oidc.Bool(u.EmailVerified)
		case oidc.ScopeProfile:
			info.Name, info.PreferredUsername = u.Name, u.Username
		}
	}
	return nil
}

func (s *storage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	return s.SetUserinfoFromScopes(ctx, info, subject, "", []string{oidc.ScopeOpenID, oidc.ScopeEmail, oidc.ScopeProfile})
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("introspection is not supported")
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("no client keys")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile is not supported")
}

func (s *storage) Health(context.Context) error { return nil }

// client is the one registered client: a confidential web application.
type client struct{ s *storage }

func (c *client) GetID() string                       { return c.s.p.ClientID }
func (c *client) RedirectURIs() []string              { return []string{c.s.redirect} }
func (c *client) PostLogoutRedirectURIs() []string    { return nil }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode}
}
func (c *client) LoginURL(id string) string           { return "/login?authRequestID=" + id }
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration {
	if d := c.s.p.IDTokenLifetime.Load(); d != 0 {
		return time.Duration(d)
	}
	return time.Hour
}
func (c *client) DevMode() bool { return true } // http:// redirect URIs of the test server
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(string) bool { return false }
func (c *client) IDTokenUserinfoClaimsAssertion() bool {
	return !c.s.p.ClaimsOnlyAtUserinfo.Load()
}
func (c *client) ClockSkew() time.Duration { return 0 }

// LoginAction is where the provider's login form posts (username,
// password and id, the sign-in request's), for tests without a browser.
func (p *Provider) LoginAction() string { return p.Issuer + "/login" }

// rewriteTokens passes requests to next and, while WrongAudience is set,
// gives the ID token of the token endpoint's answers another audience.
func (p *Provider) rewriteTokens(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.WrongAudience.Load() || r.URL.Path != "/oauth/token" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var answer map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(body, &answer) == nil {
			if raw, ok := answer["id_token"].(string); ok {
				if resigned, err := p.storage.resign(raw, func(c map[string]any) {
					c["aud"] = []string{"someone-else"}
					c["azp"] = "someone-else"
					c["client_id"] = "someone-else"
				}); err == nil {
					answer["id_token"] = resigned
					body, _ = json.Marshal(answer)
				}
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

// resign returns the JWT raw with its claims changed by change, signed
// with the provider's key.
func (s *storage) resign(raw string, change func(map[string]any)) (string, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return "", errors.New("not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", err
	}
	change(claims)
	if payload, err = json.Marshal(claims); err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: s.key, KeyID: s.keyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}
