package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// cmdHealthcheck asks a running quire serve whether it is alive: GET
// /healthz at --addr (QUIRE_ADDR, as serve reads it), over HTTPS when the
// server has a certificate (QUIRE_TLS_CERT). It succeeds on 200 and fails,
// in one line, on anything else within five seconds. It is what the
// container image's HEALTHCHECK runs: the image has no shell and no client.
func cmdHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c := newCommand("healthcheck", usageOf("healthcheck"))
	var addr, tlsCert string
	c.fs.StringVar(&addr, "addr", "127.0.0.1:8080", "address quire serve listens on; an unspecified host (0.0.0.0, ::) is asked on loopback (env QUIRE_ADDR)")
	c.fs.StringVar(&tlsCert, "tls-cert", "", "when set, ask over HTTPS, as serve with a certificate answers (env QUIRE_TLS_CERT)")
	pos, err := c.parse(args, getenv, stdout, "addr", "tls-cert")
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("healthcheck: unexpected argument %q", pos[0])
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("healthcheck: --addr %q is not host:port", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	scheme := "http"
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	if tlsCert != "" {
		// Whether this process answers, not who it is: the certificate
		// names the public host, not the loopback address asked.
		scheme = "https"
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	url := scheme + "://" + net.JoinHostPort(host, port) + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %s: %w", url, err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 1<<10))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, res.Status)
	}
	_, err = fmt.Fprintf(stdout, "ok: %s\n", url)
	return err
}
