package acceptance

import (
	"context"
	"errors"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"quire"
	"quire/live/livetest"
)

// cutAfterPush makes the page's live socket lose the confirmation of its
// next push: the socket is closed by the page right after the push is sent
// (the server reads the push, stores it, and its answer finds the socket
// closing, which drops it), and no new socket opens until
// window.quireTestUnblock() is called (a connection attempt fails as when
// the network is down). Injected by CDP, which the page's CSP does not
// govern.
const cutAfterPush = `(() => {
  const send = WebSocket.prototype.send;
  let cut = true, blocked = false;
  WebSocket.prototype.send = function (data) {
    send.call(this, data);
    if (cut && typeof data === "string" && JSON.parse(data).type === "push") {
      cut = false;
      blocked = true;
      this.close();
    }
  };
  const Native = window.WebSocket;
  window.WebSocket = function (url, protocols) {
    if (blocked) {
      throw new Error("the test holds the network");
    }
    return new Native(url, protocols);
  };
  window.WebSocket.prototype = Native.prototype;
  window.quireTestUnblock = () => { blocked = false; };
  return true;
})()`

// TestBrowserLiveLostConfirmation: Grace types "!"; the server stores it,
// but its confirmation never reaches the page (the socket is cut right
// after the push), and she types "?" while disconnected. Being the last
// editor, her leaving makes the server save the text and trim the stored
// changes, so that when the page reconnects with its count it gets the
// whole text, with the number of its last accepted change. The editor
// drops "!" (in the text already), rebases "?" only, and every character
// is there exactly once, in the editor and in the document.
func TestBrowserLiveLostConfirmation(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, withLive())
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := liveRunbook(e, grace)
	joinLive(t, ctx, e, "grace@example.com", doc.ID)
	read(t, ctx, "the socket cutter", chromedp.Evaluate[bool](cutAfterPush))

	do(t, ctx, "Grace types; the socket is cut after the push", editorToEnd(), typeInEditor("!"),
		waitJS(`document.getElementById("live-status").textContent.startsWith("Connection lost")`))
	do(t, ctx, "Grace types while disconnected", typeInEditor("?"))
	livetest.Eventually(t, "the text saved and its changes trimmed", func() bool {
		_, err := e.store.LiveChangesSince(context.Background(), quire.Visibility{All: true}, doc.ID, 0, 1)
		return e.live.Sessions() == 0 && errors.Is(err, quire.ErrLiveTrimmed)
	})
	if d := e.get(grace, doc.ID); d.Content != "Hello World!" {
		t.Fatalf("the saved text is %q, want the push stored: %q", d.Content, "Hello World!")
	}
	if n := read(t, ctx, "unsent", chromedp.Evaluate[int](`window.quireEditor.unsent()`)); n != 2 {
		t.Fatalf("%d changes unconfirmed in the page, want 2 (the one stored, the one typed after)", n)
	}

	do(t, ctx, "the network is back", chromedp.Evaluate[chromedp.Void](`window.quireTestUnblock()`),
		waitJS(`window.quireEditor.unsent() === 0 && document.getElementById("live-status").textContent.startsWith("Live:")`))
	want := "Hello World!?"
	if got := read(t, ctx, "the editor", chromedp.Evaluate[string](liveEditorText)); got != want {
		t.Fatalf("the editor holds %q, want %q: every character once", got, want)
	}
	if got := livetest.Replay(t, e.store, doc.ID); got != want {
		t.Fatalf("the live text on the server is %q, want %q", got, want)
	}
}

// TestBrowserLiveLostConfirmationAndReload: the same gap across a reload.
// Grace types "a" (confirmed), then "!" whose confirmation is lost, then
// "?" while disconnected; the server saves and trims; she reloads the page.
// The page starts from the changes it kept with their number, and the
// whole text the server answers says "!" was accepted: "!" is dropped,
// "?" is sent, each once. Were the number not kept, the page would count
// from 1 again and drop "?" with "!".
func TestBrowserLiveLostConfirmationAndReload(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t, withLive())
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := liveRunbook(e, grace)
	joinLive(t, ctx, e, "grace@example.com", doc.ID)
	do(t, ctx, "Grace types a, confirmed", editorToEnd(), typeInEditor("a"),
		waitJS(`window.quireEditor.unsent() === 0 && `+liveEditorText+` === "Hello Worlda"`))
	read(t, ctx, "the socket cutter", chromedp.Evaluate[bool](cutAfterPush))
	do(t, ctx, "Grace types; the socket is cut after the push", typeInEditor("!"),
		waitJS(`document.getElementById("live-status").textContent.startsWith("Connection lost")`))
	do(t, ctx, "Grace types while disconnected", typeInEditor("?"))
	livetest.Eventually(t, "the text saved and its changes trimmed", func() bool {
		_, err := e.store.LiveChangesSince(context.Background(), quire.Visibility{All: true}, doc.ID, 1, 1)
		return e.live.Sessions() == 0 && errors.Is(err, quire.ErrLiveTrimmed)
	})
	want := "Hello Worlda!?"
	// The page asks before it goes (changes unconfirmed): she leaves.
	dlg := watchDialogs(ctx)
	do(t, ctx, "Grace reloads the page", chromedp.Reload(), waitVisible(theEditor),
		waitJS(`window.quireEditor.unsent() === 0 && document.getElementById("live-status").textContent.startsWith("Live:")`))
	if typ := dlg.next(t, ctx, "the reload"); typ != cdppage.DialogTypeBeforeunload {
		t.Errorf("the reload opened a %s dialog", typ)
	}
	if got := read(t, ctx, "the editor", chromedp.Evaluate[string](liveEditorText)); got != want {
		t.Fatalf("the editor holds %q, want %q: every character once", got, want)
	}
	if got := livetest.Replay(t, e.store, doc.ID); got != want {
		t.Fatalf("the live text on the server is %q, want %q", got, want)
	}
}
