package storetest

import (
	"testing"

	"quire"
)

func init() { register("settings", testSettings) }

func testSettings(t *testing.T, open Opener) {
	t.Run("a setting reads back, is replaced, and an unknown one is not found", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		_, err := s.Setting(ctx, quire.SettingPublicURL)
		wantCode(t, err, quire.ENOTFOUND)
		for _, v := range []string{"http://127.0.0.1:8080", "https://docs.example.com"} {
			if err := s.SetSetting(ctx, quire.SettingPublicURL, v); err != nil {
				t.Fatal(err)
			}
			got, err := s.Setting(ctx, quire.SettingPublicURL)
			if err != nil || got != v {
				t.Errorf("Setting = %q, %v; want %q", got, err, v)
			}
		}
		_, err = s.Setting(ctx, "no such key")
		wantCode(t, err, quire.ENOTFOUND)
	})
}
