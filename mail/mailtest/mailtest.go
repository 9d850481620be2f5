// Package mailtest runs a real SMTP server (github.com/emersion/go-smtp)
// inside a test process, on 127.0.0.1, and records what it accepts: the
// mail counterpart of net/http/httptest.
package mailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one mail the server accepted.
type Message struct {
	From string
	To   []string
	Data []byte // as received, headers and MIME body
	// TLS reports whether the session was encrypted; Auth is the user name
	// it authenticated as ("" for none).
	TLS  bool
	Auth string
}

// Option configures a Server.
type Option func(*Server)

// WithAuth requires AUTH PLAIN with this user and password before MAIL.
func WithAuth(user, pass string) Option {
	return func(s *Server) { s.user, s.pass = user, pass }
}

// WithSTARTTLS offers STARTTLS with a certificate for 127.0.0.1 signed by
// the server's own CA (see ClientTLS).
func WithSTARTTLS() Option { return func(s *Server) { s.tlsMode = "starttls" } }

// WithImplicitTLS speaks TLS from the first byte (smtps).
func WithImplicitTLS() Option { return func(s *Server) { s.tlsMode = "implicit" } }

// RefuseFirst makes the server answer the first n messages' DATA with a
// temporary failure (451), as a server that is overloaded would.
func RefuseFirst(n int) Option { return func(s *Server) { s.refuse = n } }

// Server is an SMTP server for one test. It is closed by t.Cleanup.
type Server struct {
	// URL is smtp://127.0.0.1:PORT (smtps:// with WithImplicitTLS), with
	// the user and password of WithAuth.
	URL string

	user, pass string
	tlsMode    string
	refuse     int
	clientTLS  *tls.Config

	mu       sync.Mutex
	messages []Message
	refused  int
	arrived  chan struct{} // closed and replaced at every accepted message
	onData   func(n int)
}

// NewServer starts a server on 127.0.0.1 on a free port.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	return NewServerAt(t, "127.0.0.1:0", opts...)
}

// NewServerAt starts a server listening on addr (a loopback address), for
// tests of a server that comes up after a client first failed to reach it.
func NewServerAt(t testing.TB, addr string, opts ...Option) *Server {
	t.Helper()
	s := &Server{arrived: make(chan struct{})}
	for _, opt := range opts {
		opt(s)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &session{srv: s, conn: c, tls: isTLS}, nil
	}))
	srv.Domain = "127.0.0.1"
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.MaxMessageBytes = 1 << 20
	// Loopback only: the client's PLAIN auth is allowed unencrypted there.
	srv.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	scheme := "smtp"
	if s.tlsMode != "" {
		serverTLS, clientTLS, err := certificates()
		if err != nil {
			ln.Close()
			t.Fatalf("mailtest: %v", err)
		}
		s.clientTLS = clientTLS
		if s.tlsMode == "implicit" {
			ln = tls.NewListener(ln, serverTLS)
			scheme = "smtps"
		} else {
			srv.TLSConfig = serverTLS
		}
	}
	u := &url.URL{Scheme: scheme, Host: ln.Addr().String()}
	if s.user != "" {
		u.User = url.UserPassword(s.user, s.pass)
	}
	s.URL = u.String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return s
}

// ClientTLS returns a TLS configuration that trusts the server's
// certificate (nil without TLS).
func (s *Server) ClientTLS() *tls.Config { return s.clientTLS }

// OnData sets a function called with the number of messages accepted so
// far, each time one is accepted (after it is recorded).
func (s *Server) OnData(f func(n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onData = f
}

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Refused returns the number of messages refused by RefuseFirst so far.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Wait waits until at least n messages were accepted and returns them all;
// it fails the test after timeout.
func (s *Server) Wait(t testing.TB, n int, timeout time.Duration) []Message {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, arrived := len(s.messages), s.arrived
		s.mu.Unlock()
		if got >= n {
			return s.Messages()
		}
		select {
		case <-arrived:
		case <-deadline.C:
			t.Fatalf("mailtest: %d messages after %v, want %d", got, timeout, n)
		}
	}
}

type session struct {
	srv  *Server
	conn *smtp.Conn
	tls  bool
	auth string
	from string
	to   []string
}

func (s *session) AuthMechanisms() []string {
	if s.srv.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if user != s.srv.user || pass != s.srv.pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Invalid credentials"}
		}
		s.auth = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.srv.user != "" && s.auth == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.srv.mu.Lock()
	if s.srv.refused < s.srv.refuse {
		s.srv.refused++
		s.srv.mu.Unlock()
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
	}
	s.srv.messages = append(s.srv.messages, Message{From: s.from, To: s.to, Data: data, TLS: isTLS || s.tls, Auth: s.auth})
	n, onData := len(s.srv.messages), s.srv.onData
	close(s.srv.arrived)
	s.srv.arrived = make(chan struct{})
	s.srv.mu.Unlock()
	if onData != nil {
		onData(n)
	}
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

// certificates makes a CA and a certificate for 127.0.0.1 signed by it.
func certificates() (server, client *tls.Config, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mailtest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	client = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	return server, client, nil
}

// Parsed is a message read back: its headers and its decoded text and HTML
// parts.
type Parsed struct {
	Header  netmail.Header
	Subject string // decoded from RFC 2047
	Text    string
	HTML    string
}

// Parse reads the message's headers and decodes its text and HTML parts
// (multipart/alternative or a single part, quoted-printable or base64).
func (m Message) Parse() (*Parsed, error) {
	msg, err := netmail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return nil, err
	}
	p := &Parsed{Header: msg.Header}
	if p.Subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return nil, err
	}
	err = readPart(p, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	return p, err
}

// MustParse is Parse in a test: a message that does not parse fails it.
func (m Message) MustParse(t testing.TB) *Parsed {
	t.Helper()
	p, err := m.Parse()
	if err != nil {
		t.Fatalf("parse the mail to %v: %v", m.To, err)
	}
	return p
}

func readPart(p *Parsed, contentType, encoding string, body io.Reader) error {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("content type %q: %w", contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			// multipart decodes quoted-printable itself and drops the
			// header; base64 is left to readPart.
			if err := readPart(p, part.Header.Get("Content-Type"), part.Header.Get("Content-Transfer-Encoding"), part); err != nil {
				return err
			}
		}
	}
	body, err = decode(encoding, body)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	switch mt {
	case "text/plain":
		p.Text += string(b)
	case "text/html":
		p.HTML += string(b)
	}
	return nil
}

var linkRE = regexp.MustCompile(`https?://[^\s"<>]+`)

// Links returns every http(s) address in the text part, in order.
func (p *Parsed) Links() []string { return linkRE.FindAllString(p.Text, -1) }
