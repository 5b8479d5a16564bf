package pki

import (
	"crypto/tls"
	"strings"
	"testing"
)

func TestCipherSuitesAreSecureAEAD(t *testing.T) {
	secure := map[uint16]bool{}
	for _, s := range tls.CipherSuites() {
		secure[s.ID] = true
	}
	for _, id := range CipherSuites() {
		name := tls.CipherSuiteName(id)
		if !secure[id] || !strings.HasPrefix(name, "TLS_ECDHE_") || !(strings.Contains(name, "_GCM_") || strings.Contains(name, "CHACHA20_POLY1305")) {
			t.Errorf("%s is not an ECDHE AEAD suite that crypto/tls counts secure", name)
		}
	}
	b, err := Ensure(t.Context(), t.TempDir(), Options{Server: "https://127.0.0.1:6443"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ServerTLS.CipherSuites) == 0 {
		t.Fatal("ServerTLS leaves crypto/tls's default suites (CBC included)")
	}
}
