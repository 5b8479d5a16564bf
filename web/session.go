package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// CookieName is the session cookie. The __Host- prefix makes the browser
// refuse it unless it is Secure, has Path=/ and no Domain.
const CookieName = "__Host-skiff-session"

// CSRFHeader carries the session's CSRF token on every write.
const CSRFHeader = "X-Skiff-CSRF"

// sealAAD binds sealed cookies to this format.
var sealAAD = []byte("skiff-dashboard-session-v1")

// errBadSession is any cookie that does not open, or has expired.
var errBadSession = errors.New("web: invalid or expired session")

// session is what the sealed cookie holds.
type session struct {
	Token   string `json:"t"`
	Expires int64  `json:"x"` // unix seconds
	Nonce   string `json:"n"` // random; the CSRF token is derived from it
}

// sealer seals sessions into cookie values (AES-256-GCM) and derives CSRF
// tokens (HMAC-SHA256), with two keys derived from the one session key.
type sealer struct {
	aead    cipher.AEAD
	csrfKey []byte
}

func newSealer(key []byte) (*sealer, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("web: session key must be at least 32 bytes, got %d", len(key))
	}
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("seal"))
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return &sealer{aead: aead, csrfKey: derive("csrf")}, nil
}

func (s *sealer) seal(sess session) (string, error) {
	plain, err := json.Marshal(sess)
	if err != nil {
		return "", fmt.Errorf("web: seal: %w", err)
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("web: seal: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, plain, sealAAD)
	return base64.RawURLEncoding.EncodeToString(out), nil
}

func (s *sealer) open(value string, now time.Time) (session, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return session{}, errBadSession
	}
	ns := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:ns], raw[ns:], sealAAD)
	if err != nil {
		return session{}, errBadSession
	}
	var sess session
	if err := json.Unmarshal(plain, &sess); err != nil || sess.Token == "" || sess.Nonce == "" {
		return session{}, errBadSession
	}
	if now.Unix() >= sess.Expires {
		return session{}, errBadSession
	}
	return sess, nil
}

// csrf is the session's CSRF token: the browser reads it from /ui/session
// (a same-origin JSON response another site cannot read) and sends it in
// CSRFHeader on every write.
func (s *sealer) csrf(sess session) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte(sess.Nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *sealer) checkCSRF(sess session, got string) bool {
	want := s.csrf(sess)
	return got != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// newNonce is 16 random bytes, base64url.
func newNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("web: nonce: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// sessionCookie is the cookie that carries value; an empty value with
// maxAge -1 deletes it.
func sessionCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: CookieName, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode,
	}
}

// sameOrigin refuses cross-site requests: a present Origin header must be
// this host over https, and Sec-Fetch-Site (sent by every current
// browser) must not say cross-site. SameSite=Strict already keeps the
// cookie off cross-site requests; this is the second fence.
func sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" && o != "https://"+r.Host {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}
