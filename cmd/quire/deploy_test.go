package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"quire/internal/notice"
)

// lookTool finds a system tool, or skips t loudly (fails it when the
// variable require is "1", as CI sets it).
func lookTool(t *testing.T, name, require string, paths ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv(require) == "1" {
		t.Fatalf("%s is required (%s=1) but not installed", name, require)
	}
	msg := fmt.Sprintf("%s NOT AVAILABLE: %s SKIPPED; set %s=1 to make this a failure.", name, t.Name(), require)
	notice.Print(msg)
	t.Skip(msg)
	return ""
}

// TestDeploySystemdUnit checks deploy/quire.service with systemd's own
// verifier: any complaint (an unknown key is only a warning) fails.
func TestDeploySystemdUnit(t *testing.T) {
	t.Parallel()
	analyze := lookTool(t, "systemd-analyze", "QUIRE_REQUIRE_SYSTEMD")
	unit, err := os.ReadFile(filepath.Join("..", "..", "deploy", "quire.service"))
	if err != nil {
		t.Fatal(err)
	}
	// verify checks that ExecStart is an executable: this test's own
	// binary stands in for an installed quire.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text := replaceOnce(t, string(unit), "ExecStart=/usr/local/bin/quire serve", "ExecStart="+self+" serve")
	for _, want := range []string{"User=quire", "StateDirectory=quire", "ProtectSystem=strict", "NoNewPrivileges=yes"} {
		if !strings.Contains(text, "\n"+want+"\n") {
			t.Errorf("the unit lacks %s", want)
		}
	}
	path := filepath.Join(t.TempDir(), "quire.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// replaceOnce replaces old, which must occur exactly once in s: the test
// and the example it adapts stay in step.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("the example has %q %d times, want once: update the test with the example", old, n)
	}
	return strings.Replace(s, old, new, 1)
}

// TestDeployNginx runs deploy/nginx.conf, adapted only in its addresses and
// certificate, in a real nginx in front of a real quire started as its
// comment says (--trusted-proxies 127.0.0.1), over TLS, and checks what
// the example claims: plain HTTP redirects; a sign-in from a browser
// (Origin, no Sec-Fetch-Site) on a non-default port passes with Host
// $http_host and is refused 403 CROSS_ORIGIN with the common Host $host;
// the address quire logs is the client's, not one it forged in
// X-Forwarded-For.
func TestDeployNginx(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs nginx: not in -short")
	}
	nginx := lookTool(t, "nginx", "QUIRE_REQUIRE_NGINX", "/usr/sbin/nginx")
	site, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildQuire(t)
	n := startNode(t, "deploy", bin, filepath.Join(t.TempDir(), "quire.db"), "https://docs.example.test", "",
		"--trusted-proxies", "127.0.0.1")
	password := n.waitPassword(t)
	certFile, keyFile, roots := selfSigned(t)

	start := func(t *testing.T, hostHeader string) (httpsBase, httpBase string) {
		httpAddr, tlsAddr := freeAddr(t), freeAddr(t)
		conf := string(site)
		conf = replaceOnce(t, conf, "server 127.0.0.1:8080;", "server "+strings.TrimPrefix(n.base, "http://")+";")
		conf = replaceOnce(t, conf, "listen 80;", "listen "+httpAddr+";")
		conf = replaceOnce(t, conf, "listen [::]:80;", "")
		conf = replaceOnce(t, conf, "listen 443 ssl;", "listen "+tlsAddr+" ssl;")
		conf = replaceOnce(t, conf, "listen [::]:443 ssl;", "")
		conf = replaceOnce(t, conf, "/etc/letsencrypt/live/docs.example.com/fullchain.pem", certFile)
		conf = replaceOnce(t, conf, "/etc/letsencrypt/live/docs.example.com/privkey.pem", keyFile)
		// Both locations (the live editor's and the rest) pass Host.
		if n := strings.Count(conf, "proxy_set_header Host $http_host;"); n != 2 {
			t.Fatalf("the example sets Host %d times, want 2 (the live editor's location and /)", n)
		}
		conf = strings.ReplaceAll(conf, "proxy_set_header Host $http_host;", "proxy_set_header Host "+hostHeader+";")
		runNginx(t, nginx, conf, httpAddr, tlsAddr)
		return "https://" + tlsAddr, "http://" + httpAddr
	}
	// A browser's client: from 127.0.0.2, which is not a trusted proxy.
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	client := &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, TLSClientConfig: &tls.Config{RootCAs: roots}},
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	do := func(t *testing.T, method, url string, header map[string]string, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		bufio.NewReader(res.Body).WriteTo(&b)
		return res, b.String()
	}
	login := `{"email":"admin@localhost","password":"` + password + `"}`

	t.Run("the example as written", func(t *testing.T) {
		httpsBase, httpBase := start(t, "$http_host")

		res, _ := do(t, "GET", httpBase+"/api/auth/me", nil, "")
		if res.StatusCode != http.StatusMovedPermanently || !strings.HasPrefix(res.Header.Get("Location"), "https://") {
			t.Errorf("plain HTTP: %d Location %q, want a 301 to https", res.StatusCode, res.Header.Get("Location"))
		}

		res, body := do(t, "POST", httpsBase+"/api/auth/login",
			map[string]string{"Content-Type": "application/json", "Origin": httpsBase}, login)
		if res.StatusCode != http.StatusOK {
			t.Errorf("a sign-in from the page's own origin on a non-default port: %d %s", res.StatusCode, body)
		}

		do(t, "GET", httpsBase+"/healthz", map[string]string{"X-Forwarded-For": "198.51.100.7", "X-Request-Id": "deploy-forged-xff"}, "")
		if got := loggedClient(t, n, "deploy-forged-xff"); got != "127.0.0.2" {
			t.Errorf("quire logged the client as %q, want 127.0.0.2 (the address nginx saw, not the forged one)", got)
		}
	})

	t.Run("with the common Host header a sign-in on a non-default port is refused", func(t *testing.T) {
		httpsBase, _ := start(t, "$host")
		res, body := do(t, "POST", httpsBase+"/api/auth/login",
			map[string]string{"Content-Type": "application/json", "Origin": httpsBase}, login)
		var e struct{ Code string }
		json.Unmarshal([]byte(body), &e)
		if res.StatusCode != http.StatusForbidden || e.Code != "CROSS_ORIGIN" {
			t.Errorf("%d %s, want the 403 CROSS_ORIGIN the example warns of", res.StatusCode, body)
		}
	})
}

// loggedClient is the client address of the request log line with id,
// waiting for it: the log is written through a buffer (logbuf.go).
func loggedClient(t *testing.T, n *node, id string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, line := range strings.Split(n.stderr.String(), "\n") {
			var l struct {
				Msg       string `json:"msg"`
				RequestID string `json:"request_id"`
				Client    string `json:"client"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "request" && l.RequestID == id {
				return l.Client
			}
		}
	}
	t.Fatalf("no request log line with request_id %s", id)
	return ""
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// runNginx checks site (a server configuration, as in sites-enabled) with
// nginx -t inside a main configuration of its own, then runs it in the
// foreground until t ends, and waits until it accepts connections on addrs.
func runNginx(t *testing.T, bin, site string, addrs ...string) {
	t.Helper()
	dir := nginxDir(t)
	sitePath := filepath.Join(dir, "quire.conf")
	if err := os.WriteFile(sitePath, []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	confPath := writeNginxConf(t, dir, 64, "\taccess_log "+dir+"/logs/access.log;\n", "\tinclude "+sitePath+";\n")
	args := nginxArgs(dir, confPath)
	if out, err := exec.Command(bin, append([]string{"-t"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s\n%s", err, out, site)
	}
	out, exited := launchNginx(t, bin, dir, args)
	for _, addr := range addrs {
		for deadline := time.Now().Add(20 * time.Second); ; {
			select {
			case <-exited:
				t.Fatalf("nginx exited:\n%s", out.String())
			default:
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("nginx did not listen on %s within 20s:\n%s", addr, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// nginxDir makes a scratch prefix for nginx, with the logs and tmp
// folders its configurations name.
func nginxDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeNginxConf writes dir's nginx.conf (dir made by nginxDir) and returns
// its path: one worker in the foreground with connections connections, its
// pid, logs and temporary files under dir, and the http block made of
// httpHead (log formats, access log), the temporary paths, then httpBody.
func writeNginxConf(t *testing.T, dir string, connections int, httpHead, httpBody string) string {
	t.Helper()
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/logs/nginx.pid;
error_log %[1]s/logs/error.log warn;
events { worker_connections %[2]d; }
http {
%[3]s	client_body_temp_path %[1]s/tmp/body;
	proxy_temp_path %[1]s/tmp/proxy;
	fastcgi_temp_path %[1]s/tmp/fastcgi;
	uwsgi_temp_path %[1]s/tmp/uwsgi;
	scgi_temp_path %[1]s/tmp/scgi;
%[4]s}
`, dir, connections, httpHead, httpBody)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return confPath
}

// nginxArgs are the arguments that run nginx on the configuration at
// confPath, with dir (made by nginxDir) as its prefix and its error log.
func nginxArgs(dir, confPath string) []string {
	return []string{"-p", dir, "-c", confPath, "-e", filepath.Join(dir, "logs", "error.log")}
}

// launchNginx starts nginx with args (nginxArgs of dir) in the foreground,
// its configuration saying "daemon off". When the test ends it stops nginx
// (SIGQUIT, then SIGKILL after 5s) and, if the test failed, logs nginx's
// output and the last lines of its error log. The channel is closed when
// nginx exits.
func launchNginx(t *testing.T, bin, dir string, args []string) (*syncBuffer, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			errLog, _ := os.ReadFile(filepath.Join(dir, "logs", "error.log"))
			t.Logf("nginx output:\n%s\nnginx error log (last lines):\n%s", out.String(), tail(string(errLog), 30))
		}
	})
	return out, exited
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "quire test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}
