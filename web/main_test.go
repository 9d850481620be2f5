package web_test

import (
	"os"
	"testing"
)

// TestMain stops the Chromium that the browser tests share (newChrome).
func TestMain(m *testing.M) {
	code := m.Run()
	stopChrome()
	os.Exit(code)
}
