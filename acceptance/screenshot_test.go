package acceptance

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestScreenshotsLeaveTheTreeAlone: a test run does not rewrite the
// README's screenshots (tracked files: every later build would say -dirty);
// only -update-screenshots does.
func TestScreenshotsLeaveTheTreeAlone(t *testing.T) {
	if *updateScreenshots {
		t.Skip("-update-screenshots: the screenshots are written on purpose")
	}
	ctx := newChrome(t)
	tracked := filepath.Join(screenshotDir, "sign-in.png")
	before, err := os.ReadFile(tracked)
	if err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "screenshot a blank page", chromedp.Navigate("about:blank"), screenshot("sign-in.png"))
	after, err := os.ReadFile(tracked)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("a test rewrote %s", tracked)
	}
}
