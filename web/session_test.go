package web

import (
	"bytes"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSealOpen(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	s, err := newSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	sess := session{Token: "tok", Expires: now.Add(time.Hour).Unix(), Nonce: "n1"}
	v, err := s.seal(sess)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.open(v, now)
	if err != nil || got != sess {
		t.Fatalf("open: %+v %v", got, err)
	}
	if _, err := s.open(v, now.Add(time.Hour)); err == nil {
		t.Fatal("an expired session opened")
	}
	other, _ := newSealer([]byte(strings.Repeat("j", 32)))
	if _, err := other.open(v, now); err == nil {
		t.Fatal("a session opened under another key")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(v)
	var flipped []string
	for i := range raw { // every byte: nonce, ciphertext and tag
		b := bytes.Clone(raw)
		b[i] ^= 0x20
		flipped = append(flipped, base64.RawURLEncoding.EncodeToString(b))
	}
	for _, bad := range append([]string{"", "!!!", v[:10]}, flipped...) {
		if _, err := s.open(bad, now); err == nil {
			t.Fatalf("%q opened", bad)
		}
	}
	// CSRF tokens: per session, checked in constant time.
	if !s.checkCSRF(sess, s.csrf(sess)) || s.checkCSRF(sess, "") || s.checkCSRF(sess, s.csrf(session{Nonce: "n2"})) {
		t.Fatal("CSRF check")
	}
	if _, err := newSealer([]byte("short")); err == nil {
		t.Fatal("a short key was taken")
	}
}

func TestSameOrigin(t *testing.T) {
	cases := []struct {
		name, origin, site string
		want               bool
	}{
		{"no headers", "", "", true},
		{"same origin", "https://example.test", "same-origin", true},
		{"typed", "", "none", true},
		{"other origin", "https://evil.test", "", false},
		{"http origin", "http://example.test", "", false},
		{"same-site", "", "same-site", false},
		{"cross-site", "", "cross-site", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "https://example.test/ui/login", nil)
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			if c.site != "" {
				r.Header.Set("Sec-Fetch-Site", c.site)
			}
			if got := sameOrigin(r); got != c.want {
				t.Fatalf("sameOrigin = %v", got)
			}
		})
	}
}
