package hardening

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
)

// regressTimeout bounds every request of the regression tests: an answer
// slower than this is a hang.
const regressTimeout = 10 * time.Second

// regressHTTP sends requests exactly as written (path and query are not
// cleaned or re-escaped) to one server, over TLS with the server's CA.
type regressHTTP struct {
	base  *url.URL
	token string
	c     *http.Client
}

func newRegressHTTP(t *testing.T, s *servertest.Server, token string) *regressHTTP {
	t.Helper()
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Bundle().CACertPEM) {
		t.Fatal("no CA certificate in the bundle")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	t.Cleanup(tr.CloseIdleConnections)
	return &regressHTTP{base: u, token: token, c: &http.Client{Transport: tr, Timeout: regressTimeout}}
}

// regressReply is one answer: status, headers and the whole body.
type regressReply struct {
	code   int
	header http.Header
	body   []byte
}

// do sends method to pathQuery (an already escaped path, optionally with
// "?query") with body and Content-Type ct ("" sends none).
func (h *regressHTTP) do(ctx context.Context, method, pathQuery, ct string, body []byte) (regressReply, error) {
	auth := ""
	if h.token != "" {
		auth = "Bearer " + h.token
	}
	return h.send(ctx, method, pathQuery, ct, auth, body)
}

// doAuth is do with the Authorization header auth ("" sends none) and a
// JSON body.
func (h *regressHTTP) doAuth(ctx context.Context, method, pathQuery, auth string, body []byte) (regressReply, error) {
	return h.send(ctx, method, pathQuery, "application/json", auth, body)
}

func (h *regressHTTP) send(ctx context.Context, method, pathQuery, ct, auth string, body []byte) (regressReply, error) {
	p, q, _ := strings.Cut(pathQuery, "?")
	u := *h.base
	u.Opaque = p // sent verbatim: no cleaning of "..", no re-escaping
	u.RawQuery = q
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return regressReply{}, err
	}
	req.URL = &u
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := h.c.Do(req)
	if err != nil {
		return regressReply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return regressReply{}, err
	}
	return regressReply{code: resp.StatusCode, header: resp.Header, body: b}, nil
}

// regressStatus checks that r is an error answer with a Kubernetes Status
// body whose code is the HTTP status and which names a reason; it returns
// the Status.
func regressStatus(t *testing.T, r regressReply) api.Status {
	t.Helper()
	var st api.Status
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json; body %.300q", ct, r.body)
	}
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Errorf("body is not a Status: %v; body %.300q", err, r.body)
		return st
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != "Failure" {
		t.Errorf("kind %q apiVersion %q status %q, want a v1 Status Failure; body %.300q", st.Kind, st.APIVersion, st.Status, r.body)
	}
	if int(st.Code) != r.code {
		t.Errorf("Status code %d, HTTP status %d", st.Code, r.code)
	}
	if st.Reason == "" {
		t.Errorf("Status without a reason: %.300q", r.body)
	}
	return st
}

// regressListPaths are the collections whose contents a bad request must
// leave as they were.
var regressListPaths = []string{
	"/api/v1/namespaces",
	"/api/v1/services",
	"/api/v1/pods",
	"/api/v1/events",
	"/apis/apps/v1/deployments",
	"/apis/apps/v1/statefulsets",
	"/apis/discovery.k8s.io/v1/endpointslices",
	"/apis/networking.k8s.io/v1/ipaddresses",
	"/apis/networking.k8s.io/v1/servicecidrs",
}

// snapshot is every stored object of regressListPaths as
// "path ns/name@resourceVersion", sorted.
func (h *regressHTTP) snapshot(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range regressListPaths {
		ctx, cancel := context.WithTimeout(context.Background(), regressTimeout)
		r, err := h.do(ctx, http.MethodGet, p, "", nil)
		cancel()
		if err != nil {
			t.Fatalf("list %s: %v", p, err)
		}
		if r.code != http.StatusOK {
			t.Fatalf("list %s: %d %.300q", p, r.code, r.body)
		}
		var l struct {
			Items []struct {
				Metadata api.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(r.body, &l); err != nil {
			t.Fatalf("list %s: %v", p, err)
		}
		for _, it := range l.Items {
			out = append(out, p+" "+it.Metadata.Namespace+"/"+it.Metadata.Name+"@"+it.Metadata.ResourceVersion)
		}
	}
	sort.Strings(out)
	return out
}

// settled waits until a snapshot holds an entry starting with want (the
// controllers' answer to the test's own writes) and two snapshots 300ms
// apart agree, and returns it.
func (h *regressHTTP) settled(t *testing.T, want string) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	prev := h.snapshot(t)
	for {
		time.Sleep(300 * time.Millisecond)
		cur := h.snapshot(t)
		has := slices.ContainsFunc(cur, func(s string) bool { return strings.HasPrefix(s, want) })
		if has && slices.Equal(prev, cur) {
			return cur
		}
		if time.Now().After(deadline) {
			t.Fatalf("stored objects did not settle (want %q): %v", want, cur)
		}
		prev = cur
	}
}

// regressMissing is what is in a and not in b.
func regressMissing(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

// regressPanicLog is a server logger that fails the test on a record that
// reports a recovered panic (the API's and the DNS handler's recoverers
// log one at Error and the server goes on, which the answers alone would
// not show); other records go to the test log with -v.
type regressPanicLog struct {
	t     *testing.T
	attrs []slog.Attr
}

func regressLogger(t *testing.T) *slog.Logger { return slog.New(&regressPanicLog{t: t}) }

func (h *regressPanicLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *regressPanicLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	for _, a := range h.attrs {
		b.WriteString(" " + a.String())
	}
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	line := b.String()
	if r.Level >= slog.LevelError && strings.Contains(strings.ToLower(line), "panic") {
		h.t.Errorf("server logged a panic: %s", line)
	} else if testing.Verbose() {
		h.t.Log(r.Level.String() + " " + line)
	}
	return nil
}

func (h *regressPanicLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &regressPanicLog{t: h.t, attrs: append(slices.Clone(h.attrs), as...)}
}

func (h *regressPanicLog) WithGroup(string) slog.Handler { return h }
