package apiserver

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAuthenticateMiddleware(t *testing.T) {
	authn := StaticTokens{"good": {Name: "alice"}}
	var seen User
	h := authenticate(authn)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = UserFrom(r.Context())
	}))
	cases := []struct {
		name, header string
		code         int
	}{
		{"bearer", "Bearer good", 200},
		{"lowercase scheme", "bearer good", 200},
		{"missing", "", 401},
		{"empty token", "Bearer ", 401},
		{"wrong token", "Bearer bad", 401},
		{"basic", "Basic good", 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen = User{}
			rr := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/api", nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			h.ServeHTTP(rr, req)
			if rr.Code != tc.code {
				t.Fatalf("code %d, want %d", rr.Code, tc.code)
			}
			if tc.code == 200 && seen.Name != "alice" {
				t.Fatalf("user %+v", seen)
			}
		})
	}
}

func TestLimitBodyMiddleware(t *testing.T) {
	h := limitBody(10)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := readBody(r, 10); err != nil {
			writeErr(w, err)
		}
	}))
	cases := []struct {
		name string
		body string
		code int
	}{
		{"under", "12345", 200},
		{"at limit", "1234567890", 200},
		{"over", "12345678901", 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rr := httptest.NewRecorder()
			h.ServeHTTP(rr, httptest.NewRequest("POST", "/", strings.NewReader(tc.body)))
			if rr.Code != tc.code {
				t.Fatalf("code %d, want %d", rr.Code, tc.code)
			}
		})
	}
}

func TestRequestLogger(t *testing.T) {
	buf := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEnv(t, func(c *Config) { c.Logger = log })
	e.createWidget("w", nil, nil)
	// The line is written after the response: wait for it.
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(buf.String(), "code=201") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	out := buf.String()
	for _, want := range []string{"method=POST", "path=/apis/example.com/v1/namespaces/default/widgets", "code=201", "verb=create", "resource=widgets", "user=admin"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
