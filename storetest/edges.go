package storetest

import (
	"testing"
	"time"

	"quire"
)

func init() {
	register("sso invitations", testSSOInvitations)
	register("sso flows capped", testSSOFlowsCapped)
}

func testSSOFlowsCapped(t *testing.T, open Opener) {
	t.Run("at most max flows are kept, the oldest dropped for a new one", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		flow := func(state string, at time.Time) *quire.SSOFlow {
			return &quire.SSOFlow{StateHash: tokenHash(state), Nonce: "n", Verifier: "v", CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)}
		}
		for i, state := range []string{"a", "b", "c", "d", "e"} {
			if err := s.CreateSSOFlow(ctx, flow(state, baseTime.Add(time.Duration(i)*time.Second)), 3); err != nil {
				t.Fatal(err)
			}
		}
		at := baseTime.Add(time.Minute)
		for _, state := range []string{"a", "b"} {
			_, err := s.TakeSSOFlow(ctx, tokenHash(state), at)
			wantCode(t, err, quire.ENOTFOUND)
		}
		for _, state := range []string{"c", "d", "e"} {
			if _, err := s.TakeSSOFlow(ctx, tokenHash(state), at); err != nil {
				t.Errorf("flow %s: %v, want it kept", state, err)
			}
		}
	})
}

func testSSOInvitations(t *testing.T, open Opener) {
	t.Run("accepting makes the invited user active, voids its links and links the identity", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		u := &quire.User{Email: "ada@example.com", Name: "Ada", Role: quire.Role{Key: "editor"}, Status: quire.UserInvited}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		setup := &quire.OneTimeToken{UserID: u.ID, Purpose: quire.PurposeSetup, TokenHash: []byte("setup-hash-of-32-bytes-0123456789"),
			CreatedAt: baseTime, ExpiresAt: baseTime.Add(time.Hour)}
		if err := s.CreateToken(ctx, setup, nil); err != nil {
			t.Fatal(err)
		}
		id := &quire.Identity{Issuer: issuer, Subject: "sub-1", Email: u.Email, CreatedAt: baseTime}
		if err := s.AcceptInvitationWithIdentity(ctx, u.ID, id, baseTime); err != nil {
			t.Fatal(err)
		}
		if id.UserID != u.ID {
			t.Errorf("id.UserID = %q, want %q", id.UserID, u.ID)
		}
		got, err := s.UserByID(ctx, u.ID)
		if err != nil || got.Status != quire.UserActive {
			t.Fatalf("user after accepting: %+v, %v", got, err)
		}
		if linked, err := s.IdentityUser(ctx, issuer, "sub-1"); err != nil || linked.ID != u.ID {
			t.Errorf("IdentityUser = %v, %v", linked, err)
		}
		tok, err := s.TokenByHash(ctx, quire.PurposeSetup, setup.TokenHash)
		if err != nil || tok.UsedAt.IsZero() {
			t.Errorf("the setup token after accepting: %+v, %v; want it used", tok, err)
		}
		// Once only: the user is no longer invited.
		wantCode(t, s.AcceptInvitationWithIdentity(ctx, u.ID, nil, baseTime), quire.ECONFLICT)
	})
	t.Run("an active user or an unknown one accepts nothing", func(t *testing.T) {
		s, a := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		wantCode(t, s.AcceptInvitationWithIdentity(ctx, a.ID, &quire.Identity{Issuer: issuer, Subject: "sub-1", CreatedAt: baseTime}, baseTime), quire.ECONFLICT)
		_, err := s.IdentityUser(ctx, issuer, "sub-1")
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, s.AcceptInvitationWithIdentity(ctx, unknownID, nil, baseTime), quire.ENOTFOUND)
	})
}
