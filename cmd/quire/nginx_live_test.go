package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"quire/live/livetest"
	"quire/mail/mailtest"
	"quire/pgtest"
)

// TestNginxLiveKillOneNode runs two `quire serve` processes on one
// PostgreSQL behind nginx with the WebSocket location of deploy/nginx.conf,
// taken from the file (README, "Live editing"). Two editors edit one document live, each
// through its own port of nginx, whose upstream prefers one node and
// falls back to the other: they are on different nodes (Ada's connection
// ends when node A dies, Bob's goes on). Node A is killed with SIGKILL while Ada
// has a change on its way; she reconnects through nginx (to B) with her
// version and her unconfirmed change, and every change either editor was
// confirmed is in the text both end with, and in the document once B
// saves it. It skips loudly without nginx or PostgreSQL, as
// TestNginxKillOneNode.
func TestNginxLiveKillOneNode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs two nodes and nginx: not in -short")
	}
	nginx := lookTool(t, "nginx", "QUIRE_REQUIRE_NGINX", "/usr/sbin/nginx")
	dbURL := pgtest.Start(t)
	bin := buildQuire(t)
	smtp := mailtest.NewServer(t)
	a := startNode(t, "A", bin, dbURL, "http://docs.example.test", smtp.URL)
	a.waitPassword(t)
	b := startNode(t, "B", bin, dbURL, "http://docs.example.test", smtp.URL)
	viaA, viaB := startLiveNginx(t, nginx, a, b)

	addUser(t, bin, dbURL, "ada@example.com")
	addUser(t, bin, dbURL, "bob@example.com")
	ada := viaA.login(t, nil, "ada@example.com", twoNodePassword)
	bob := viaB.login(t, nil, "bob@example.com", twoNodePassword)
	var created struct {
		Document struct {
			ID string `json:"id"`
		} `json:"document"`
	}
	viaA.call(t, nil, "POST", "/api/documentation/documents", ada,
		map[string]any{"title": "Together", "content": "start\n", "visibility": "public"}).want(t, http.StatusCreated, &created)
	doc := created.Document.ID

	dial := func(base, token, id string, version *int) *livetest.Client {
		t.Helper()
		deadline := time.Now().Add(livetest.HangGuard)
		for {
			c, err := livetest.Dial(t, base, token, doc, id, version)
			if err == nil {
				return c
			}
			if time.Now().After(deadline) {
				t.Fatalf("dial %s through nginx: %v", id, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	fresh := func(base, token, id string) *livetest.Client {
		c := dial(base, token, id, nil)
		st := c.Until("state")
		c.Text, c.Version = st.Text, st.Version
		return c
	}
	ca := fresh(viaA.base, ada, "ada-tab")
	cb := fresh(viaB.base, bob, "bob-tab")
	for i := range 5 {
		ca.Push(ca.Insert(livetest.UTF16Len(ca.Text), fmt.Sprintf("a%d ", i)))
		ca.Confirm()
		cb.CatchUp(ca.Version)
		cb.Push(cb.Insert(0, fmt.Sprintf("b%d ", i)))
		cb.Confirm()
		ca.CatchUp(cb.Version)
	}
	// Ada's change is on its way when node A dies.
	ca.Pending = append(ca.Pending, ca.Insert(livetest.UTF16Len(ca.Text), "unconfirmed "))
	ca.SendPending()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	// They were on different nodes: Ada's connection ends with node A
	// (Closed fails if it stays open), and Bob goes on, on node B. (The
	// presence route cannot tell: it lists every node's people.)
	ca.Closed()
	cb.Push(cb.Insert(0, "bob-after "))
	cb.Confirm()

	// Ada reconnects through nginx (now to B) with her version and what
	// is not confirmed: the server answers with the updates after it (her
	// own change among them if A stored it), and she pushes the rest.
	re := dial(viaA.base, ada, "ada-tab", &ca.Version)
	re.Text, re.Pending = ca.Text, ca.Pending
	for {
		m, err := re.Next()
		if err != nil {
			t.Fatalf("ada after the reconnect: %v", err)
		}
		if m.Type == "state" {
			t.Fatalf("ada was sent the state after the reconnect at %d: %+v", re.Version, m)
		}
		if m.Type == "updates" {
			re.Receive(m)
			break
		}
	}
	if len(re.Pending) > 0 {
		re.SendPending()
		re.Confirm()
	}
	cb.CatchUp(re.Version)
	re.CatchUp(cb.Version)
	if re.Text != cb.Text {
		t.Fatalf("the editors differ: ada %q, bob %q", re.Text, cb.Text)
	}
	for _, want := range []string{"start", "a0 ", "a4 ", "b0 ", "b4 ", "bob-after ", "unconfirmed "} {
		if strings.Count(re.Text, want) != 1 {
			t.Errorf("the text %q holds %q %d times, want once", re.Text, want, strings.Count(re.Text, want))
		}
	}
	// Both leave: node B saves the live text as the document's content.
	final := re.Text
	re.WS.CloseNow()
	cb.WS.CloseNow()
	var got struct {
		Document struct {
			Content string `json:"content"`
		} `json:"document"`
	}
	livetest.Eventually(t, "the live text saved by node B", func() bool {
		b.call(t, nil, "GET", "/api/documentation/documents/"+doc, bob, nil).want(t, http.StatusOK, &got)
		return got.Document.Content == final
	})
}

// startLiveNginx starts nginx in front of nodes a and b with two ports:
// the first prefers a, the second b, each falling back to the other when
// its node is down. Both pass the WebSocket upgrade of the live editor as
// deploy/nginx.conf does. It returns the two ports as nodes.
func startLiveNginx(t *testing.T, bin string, a, b *node) (*node, *node) {
	t.Helper()
	dir := nginxDir(t)
	addrA, addrB := freeAddr(t), freeAddr(t)
	hostA, hostB := strings.TrimPrefix(a.base, "http://"), strings.TrimPrefix(b.base, "http://")
	// The live editor's location of deploy/nginx.conf, as it is there.
	site, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(site), "\tlocation ~ ^/documents/[^/]+/live$ {")
	end := strings.Index(string(site)[max(start, 0):], "\n\t}\n")
	if start < 0 || end < 0 {
		t.Fatal("deploy/nginx.conf has no location for the live editor (README, \"Live editing\")")
	}
	liveLocation := string(site)[start : start+end+len("\n\t}\n")]
	server := func(addr, upstream string) string {
		return fmt.Sprintf(`	server {
		listen %[1]s;
%[3]s
		location / {
			proxy_pass http://%[2]s;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $http_host;
			proxy_connect_timeout 2s;
		}
	}
`, addr, upstream, strings.ReplaceAll(liveLocation, "http://quire;", "http://"+upstream+";"))
	}
	body := fmt.Sprintf(`	upstream prefer_a {
		server %[1]s max_fails=1 fail_timeout=1s;
		server %[2]s backup;
	}
	upstream prefer_b {
		server %[2]s max_fails=1 fail_timeout=1s;
		server %[1]s backup;
	}
`, hostA, hostB) + server(addrA, "prefer_a") + server(addrB, "prefer_b")
	confPath := writeNginxConf(t, dir, 128, "", body)
	out, exited := launchNginx(t, bin, dir, nginxArgs(dir, confPath))
	viaA, viaB := &node{name: "nginx-a", base: "http://" + addrA}, &node{name: "nginx-b", base: "http://" + addrB}
	for _, n := range []*node{viaA, viaB} {
		if err := awaitHealthz(n.base, 20*time.Second, exited); err != nil {
			t.Fatalf("nginx: %v:\n%s", err, out.String())
		}
	}
	return viaA, viaB
}
