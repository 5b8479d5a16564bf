package hardening

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/server/servertest"
)

// regressHostPort is the API's host:port.
func regressHostPort(t *testing.T, s *servertest.Server) string {
	t.Helper()
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestRegressTLSVersions: the API speaks TLS 1.2 and 1.3 and nothing
// older; a TLS 1.2 client offering only suites without forward secrecy
// or with 3DES gets no session either.
func TestRegressTLSVersions(t *testing.T) {
	s := startServer(t, servertest.Options{Logger: regressLogger(t)})
	addr := regressHostPort(t, s)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.Bundle().CACertPEM)
	dial := func(cfg *tls.Config) (*tls.ConnectionState, error) {
		cfg.RootCAs, cfg.ServerName = pool, "127.0.0.1"
		d := &net.Dialer{Timeout: regressTimeout}
		c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		st := c.ConnectionState()
		return &st, nil
	}
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
		want uint16 // 0: the handshake must fail
	}{
		{"TLS 1.0", &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10}, 0},
		{"TLS 1.1", &tls.Config{MinVersion: tls.VersionTLS11, MaxVersion: tls.VersionTLS11}, 0},
		{"TLS 1.2 with 3DES only", &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA}}, 0},
		{"TLS 1.2 with RSA key exchange only", &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_256_CBC_SHA}}, 0},
		{"TLS 1.2", &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12}, tls.VersionTLS12},
		{"TLS 1.3", &tls.Config{MinVersion: tls.VersionTLS13}, tls.VersionTLS13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := dial(tc.cfg)
			switch {
			case tc.want == 0 && err == nil:
				t.Fatalf("handshake succeeded: version %x suite %s", st.Version, tls.CipherSuiteName(st.CipherSuite))
			case tc.want != 0 && err != nil:
				t.Fatalf("handshake failed: %v", err)
			case tc.want != 0 && st.Version != tc.want:
				t.Fatalf("version %x, want %x", st.Version, tc.want)
			}
		})
	}
}

// TestRegressNoPlainHTTP: plain HTTP to the API port, even with the admin
// token, gets Go's 400 ("client sent an HTTP request to an HTTPS server")
// and no API data; so do an HTTP/2 cleartext preface and garbage.
func TestRegressNoPlainHTTP(t *testing.T) {
	s := startServer(t, servertest.Options{Logger: regressLogger(t)})
	addr := regressHostPort(t, s)
	tok := s.Bundle().AdminToken
	for _, tc := range []struct {
		name, req string
		want400   bool
	}{
		{"list with the admin token", "GET /api/v1/namespaces/default/services HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + tok + "\r\n\r\n", true},
		{"create with the admin token", "POST /api/v1/namespaces/default/services HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + tok +
			"\r\nContent-Type: application/json\r\nContent-Length: 87\r\n\r\n" + `{"apiVersion":"v1","kind":"Service","metadata":{"name":"plain"},"spec":{"ports":[{"port":80}]}}`[:87], true},
		{"version, unauthenticated", "GET /version HTTP/1.0\r\n\r\n", true},
		{"HTTP/2 cleartext preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false},
		{"garbage", "\x00\x01\x02\x03hello\r\n\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", addr, regressTimeout)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.SetDeadline(time.Now().Add(regressTimeout)); err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(c, tc.req); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(io.LimitReader(c, 64<<10)) // the server closes
			if err != nil && !isReset(err) {
				t.Fatalf("read: %v (got %q)", err, got)
			}
			for _, leak := range []string{"ServiceList", "kubernetes", "gitVersion", "\"kind\"", "items"} {
				if strings.Contains(string(got), leak) {
					t.Fatalf("plain answer carries %q: %q", leak, got)
				}
			}
			if !tc.want400 {
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(got))), nil)
			if err != nil {
				t.Fatalf("no HTTP answer: %v (%q)", err, got)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "HTTPS") {
				t.Fatalf("%d %q, want Go's 400 about HTTPS", resp.StatusCode, b)
			}
		})
	}
	// Nothing of the plain create was stored.
	h := newRegressHTTP(t, s, tok)
	r, err := h.do(t.Context(), http.MethodGet, regressSvcs+"/plain", "", nil)
	if err != nil || r.code != http.StatusNotFound {
		t.Fatalf("GET plain: %v %d", err, r.code)
	}
}

// TestRegressWrongTokens: every wrong token, whatever its length or how
// much of the real one it shares, is a 401 with a Status, on reads and on
// writes (which store nothing). The comparison is constant-time in the
// code; this holds the answers.
func TestRegressWrongTokens(t *testing.T) {
	s := startServer(t, servertest.Options{Logger: regressLogger(t)})
	b := s.Bundle()
	tok := b.AdminToken
	flip := func(s string, i int) string {
		c := s[i] ^ 1
		return s[:i] + string(c) + s[i+1:]
	}
	wrong := map[string]string{
		"empty":                    "",
		"one character":            "x",
		"first character":          tok[:1],
		"half the token":           tok[:len(tok)/2],
		"all but the last":         tok[:len(tok)-1],
		"token plus one character": tok + "x",
		"token twice":              tok + tok,
		"last character changed":   flip(tok, len(tok)-1),
		"first character changed":  flip(tok, 0),
		"upper case":               strings.ToUpper(tok),
		"8 KiB":                    strings.Repeat("a", 8<<10),
	}
	if tok == strings.ToUpper(tok) {
		delete(wrong, "upper case")
	}
	ctx := context.Background()
	for name, w := range wrong {
		t.Run(name, func(t *testing.T) {
			h := newRegressHTTP(t, s, "")
			for _, req := range []struct{ method, path, auth string }{
				{http.MethodGet, regressSvcs, "Bearer " + w},
				{http.MethodPost, regressSvcs, "Bearer " + w},
				{http.MethodGet, "/api/v1/namespaces/default/services/kubernetes", "Bearer " + w},
				{http.MethodGet, regressSvcs, "Basic " + w},
			} {
				r, err := h.doAuth(ctx, req.method, req.path, req.auth, svcJSON(`"tok"`, okSpec))
				if err != nil {
					t.Fatal(err)
				}
				if r.code != http.StatusUnauthorized {
					t.Fatalf("%s %s: %d, want 401: %.200q", req.method, req.path, r.code, r.body)
				}
				if st := regressStatus(t, r); st.Reason != "Unauthorized" {
					t.Errorf("reason %q", st.Reason)
				}
			}
		})
	}
	// No Authorization header at all, and "Bearer" alone.
	h := newRegressHTTP(t, s, "")
	for _, auth := range []string{"", "Bearer", "Bearer ", tok} {
		r, err := h.doAuth(ctx, http.MethodGet, regressSvcs, auth, nil)
		if err != nil || r.code != http.StatusUnauthorized {
			t.Fatalf("Authorization %.12q: %v %d", auth, err, r.code)
		}
		regressStatus(t, r)
	}
	r, err := newRegressHTTP(t, s, tok).do(ctx, http.MethodGet, regressSvcs+"/tok", "", nil)
	if err != nil || r.code != http.StatusNotFound {
		t.Fatalf("a write with a wrong token was stored: %v %d", err, r.code)
	}
}
