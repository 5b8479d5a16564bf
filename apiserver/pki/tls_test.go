package pki

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestTLSHandshake serves HTTPS on 127.0.0.1 with the bundle's TLS config
// and reaches it with a client built from the admin kubeconfig alone: it
// trusts only the CA there and sends the admin token.
func TestTLSHandshake(t *testing.T) {
	var adminToken string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+adminToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, "ok "+r.TLS.ServerName)
	}))
	server := "https://" + srv.Listener.Addr().String()

	// Real clock: the client verifies against the real time.
	b, err := Ensure(context.Background(), t.TempDir(), Options{Server: server, SANs: []string{"skiff.internal"}})
	if err != nil {
		t.Fatal(err)
	}
	adminToken = b.AdminToken
	srv.TLS = b.ServerTLS.Clone()
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	srv.StartTLS()
	defer srv.Close()

	kc, err := LoadKubeconfig(b.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if kc.Server != server {
		t.Fatalf("kubeconfig server %s, want %s", kc.Server, server)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(kc.CAPEM) {
		t.Fatal("kubeconfig CA is not PEM")
	}

	client := func(rootCAs *x509.CertPool, serverName string, maxVersion uint16) *http.Client {
		return &http.Client{
			Timeout: 10 * time.Second,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{
				RootCAs: rootCAs, ServerName: serverName, MaxVersion: maxVersion,
				// Let the client offer old versions, so that the server's
				// refusal is what is tested.
				MinVersion: tls.VersionTLS10,
			}},
		}
	}
	get := func(c *http.Client) (string, error) {
		req, err := http.NewRequest(http.MethodGet, kc.Server+"/version", nil)
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+kc.Token)
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK {
			return "", &statusError{resp.StatusCode}
		}
		return string(body), nil
	}

	tests := []struct {
		name       string
		roots      *x509.CertPool
		serverName string
		maxVersion uint16
		wantBody   string
		wantErr    string
	}{
		{name: "by IP, trusting only the CA", roots: roots, wantBody: "ok "},
		{name: "as localhost", roots: roots, serverName: "localhost", wantBody: "ok localhost"},
		{name: "as a --tls-san", roots: roots, serverName: "skiff.internal", wantBody: "ok skiff.internal"},
		{name: "TLS 1.2", roots: roots, maxVersion: tls.VersionTLS12, wantBody: "ok "},
		{name: "TLS 1.1 refused", roots: roots, maxVersion: tls.VersionTLS11, wantErr: "protocol version"},
		{name: "name not in the certificate", roots: roots, serverName: "evil.example", wantErr: "certificate is valid for"},
		{name: "system roots do not trust it", roots: nil, wantErr: "certificate signed by unknown authority"},
		{name: "another CA does not trust it", roots: otherCA(t), wantErr: "certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := get(client(tt.roots, tt.serverName, tt.maxVersion))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if body != tt.wantBody {
				t.Fatalf("body %q, want %q", body, tt.wantBody)
			}
		})
	}
}

type statusError struct{ code int }

func (e *statusError) Error() string { return http.StatusText(e.code) }

// otherCA returns a pool holding a different Skiff CA.
func otherCA(t *testing.T) *x509.CertPool {
	t.Helper()
	b, err := Ensure(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(b.CACertPEM)
	return p
}
