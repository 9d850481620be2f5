package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/coder/websocket"

	"quire/live"
	"quire/live/changeset"
	"quire/live/livetest"
)

// TestSlowConnectionIsClosed: a client that does not read what it is sent
// (its socket's buffer is small, so the server's bytes wait in its queue)
// is closed with 1008 once 64 KiB wait, rather than growing the server's
// memory; the others go on.
func TestSlowConnectionIsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *live.Config) { c.QueueBytes = 64 << 10 })
	ada, cookie := e.User("ada@example.com", "editor")
	d := e.Document(ada, "")
	fast := e.MustDial(cookie, d.ID, "fast")

	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	var slowAddr net.Addr // the slow client's end, to find the node's
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			slowAddr = c.LocalAddr()
		}
		return c, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), livetest.HangGuard)
	defer cancel()
	slow, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.Server.URL, "http")+"/documents/"+d.ID+"/live",
		&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {"auth_token=" + cookie}},
			HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dial}}})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	// The node's end gets a small send buffer too: without it Linux grows
	// it to megabytes on loopback, and the bytes had to pass those before
	// any waited in the node's queue (16 MiB of pushes, most of a minute
	// of CPU under -race on a loaded machine).
	if err := e.SmallSendBuffer(slowAddr); err != nil {
		t.Fatal(err)
	}
	slow.SetReadLimit(1 << 20)
	hello, _ := json.Marshal(map[string]any{"type": "hello", "version": nil, "client": "slow"})
	if err := slow.Write(ctx, websocket.MessageText, hello); err != nil {
		t.Fatal(err)
	}
	// 1 MiB passes the fast client (inserted, then deleted: the text
	// stays small), some eight times what the two small socket buffers,
	// the queue's 64 KiB and the message being written hold; the slow one
	// reads nothing meanwhile.
	for range 32 {
		fast.Push(fast.Insert(0, strings.Repeat("x", 32<<10)))
		fast.Confirm()
		n := livetest.UTF16Len(fast.Text)
		del, err := changeset.Replace(n, 0, n, "")
		if err != nil {
			t.Fatal(err)
		}
		fast.Push(del)
		fast.Confirm()
	}
	// The server closes it with 1008; when its close frame cannot get
	// through the bytes the client never read (a loaded machine), the
	// server ends the connection without it: the client then reads an end
	// in the middle of a frame. Either is the server closing it; the hang
	// guard's deadline is not. (A guard of its own, after the pushes'.)
	ctx, cancel = context.WithTimeout(context.Background(), livetest.HangGuard)
	defer cancel()
	for {
		_, _, err := slow.Read(ctx)
		if err != nil {
			code := websocket.CloseStatus(err)
			cut := code == -1 && ctx.Err() == nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
				errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET))
			if code != websocket.StatusPolicyViolation && !cut {
				t.Fatalf("the slow connection ended with %v (%d), want 1008 or the connection cut", err, code)
			}
			break
		}
	}
	fast.Push(fast.Insert(0, "still here"))
	fast.Confirm()
}
