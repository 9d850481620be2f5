package secretkey_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"quire"
	"quire/secretkey"
	"quire/sqlite"
)

func TestSealAndOpen(t *testing.T) {
	k, err := secretkey.FromValue("a long configured secret")
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte("JBSWY3DPEHPK3PXP")
	sealed := k.Seal("totp secret", plain, []byte("user-1"))
	if bytes.Contains(sealed, plain) {
		t.Fatal("the sealed value holds the plaintext")
	}
	if again := k.Seal("totp secret", plain, []byte("user-1")); bytes.Equal(again, sealed) {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	got, err := k.Open("totp secret", sealed, []byte("user-1"))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	other, _ := secretkey.FromValue("another secret")
	for name, open := range map[string]func() ([]byte, error){
		"another key":     func() ([]byte, error) { return other.Open("totp secret", sealed, []byte("user-1")) },
		"another purpose": func() ([]byte, error) { return k.Open("oidc", sealed, []byte("user-1")) },
		"another record":  func() ([]byte, error) { return k.Open("totp secret", sealed, []byte("user-2")) },
		"altered": func() ([]byte, error) {
			b := bytes.Clone(sealed)
			b[len(b)-1] ^= 1
			return k.Open("totp secret", b, []byte("user-1"))
		},
	} {
		if _, err := open(); err != secretkey.ErrOpen {
			t.Errorf("%s: Open error = %v, want ErrOpen", name, err)
		}
	}
	if bytes.Equal(k.Derive("a"), k.Derive("b")) || len(k.Derive("a")) != 32 {
		t.Error("derived keys of two purposes coincide, or are not 32 bytes")
	}
	if _, err := secretkey.FromValue(""); err == nil {
		t.Error("an empty value made a key")
	}
}

func TestLoadGeneratesOnceAndPrefersTheGivenKey(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "quire.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k1, src, err := secretkey.Load(ctx, db, "")
	if err != nil || src != secretkey.Generated {
		t.Fatalf("first Load = %v, %v; want Generated", src, err)
	}
	stored, err := db.Setting(ctx, quire.SettingSecretKey)
	if err != nil || len(stored) < 43 {
		t.Fatalf("stored key %q, %v", stored, err)
	}
	k2, src, err := secretkey.Load(ctx, db, "")
	if err != nil || src != secretkey.Stored {
		t.Fatalf("second Load = %v, %v; want Stored", src, err)
	}
	sealed := k1.Seal("p", []byte("x"), nil)
	if _, err := k2.Open("p", sealed, nil); err != nil {
		t.Error("the stored key is not the generated one")
	}
	k3, src, err := secretkey.Load(ctx, db, "given outside the database")
	if err != nil || src != secretkey.Given {
		t.Fatalf("Load with a value = %v, %v", src, err)
	}
	if _, err := k3.Open("p", sealed, nil); err == nil {
		t.Error("the given key opened what the stored key sealed")
	}
}
