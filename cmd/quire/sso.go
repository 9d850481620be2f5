package main

import (
	"context"
	"log/slog"
	"net/url"
	"strings"

	"quire"
	"quire/auth"
	"quire/sso"
)

// oidcConfig is the --oidc-* part of quire serve (product.md section 12).
type oidcConfig struct {
	issuer, clientID, clientSecret string
	name, domains, defaultRole     string
	only                           bool
}

// register defines the flags with f.
func (o *oidcConfig) register(f *envFlags) {
	str := f.str
	str(&o.issuer, "oidc-issuer", "", "OpenID Connect issuer URL of the identity provider; empty: no single sign-on")
	str(&o.clientID, "oidc-client-id", "", "client id of quire at the identity provider")
	str(&o.clientSecret, "oidc-client-secret", "", "client secret of quire at the identity provider (prefer the environment variable)")
	str(&o.name, "oidc-name", "Single sign-on", "label of the sign-in button: Sign in with <name>")
	str(&o.domains, "oidc-domains", "", "comma-separated email domains whose people get an account on their first sign-in; empty: any")
	str(&o.defaultRole, "oidc-default-role", "viewer", "role of the accounts made on a first sign-in")
	f.boolean(&o.only, "oidc-only", false, "hide the password form; password sign-in only for administrators")
}

// validate reports what is wrong through bad.
func (o *oidcConfig) validate(bad func(format string, args ...any)) {
	if o.issuer == "" {
		if o.only {
			bad("--oidc-only needs --oidc-issuer")
		}
		return
	}
	if u, err := url.Parse(o.issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		bad("--oidc-issuer %q must be an https:// URL", o.issuer)
	}
	if o.clientID == "" {
		bad("--oidc-issuer needs --oidc-client-id")
	}
	if strings.TrimSpace(o.name) == "" || len(o.name) > 100 {
		bad("--oidc-name must be 1 to 100 characters")
	}
}

// service returns the single sign-on service, or nil when no issuer is set.
func (o *oidcConfig) service(ctx context.Context, store quire.Store, as *auth.Service, publicURL string, logger *slog.Logger) (*sso.Service, error) {
	if o.issuer == "" {
		return nil, nil
	}
	return sso.New(ctx, store, as, sso.Config{
		Issuer: o.issuer, ClientID: o.clientID, ClientSecret: o.clientSecret,
		Name: strings.TrimSpace(o.name), Domains: strings.Split(o.domains, ","), DefaultRole: o.defaultRole,
		Only: o.only, PublicURL: publicURL,
	}, logger)
}
