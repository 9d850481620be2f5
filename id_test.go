package quire_test

import (
	"testing"

	"quire"
)

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"0190b2a4-0000-7000-8000-000000000000", true},
		{"0190b2a4-0000-7000-8000-00000000000", false},   // one short
		{"0190b2a4-0000-7000-8000-0000000000000", false}, // one long
		{"0190B2A4-0000-7000-8000-000000000000", false},  // upper case
		{"0190b2a4x0000-7000-8000-000000000000", false},  // a hyphen missing
		{"0190b2a4-0000-7000-8000-00000000000g", false},  // not hex
		{"0190b2a40000-7000-8000-000000000000-", false},  // a hyphen moved
		{"", false},
	} {
		if got := quire.ValidID(tc.id); got != tc.want {
			t.Errorf("ValidID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
