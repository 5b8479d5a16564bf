package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
	"github.com/skiff-dev/skiff/web"
)

func TestServesAppAndAssets(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	code, body, hdr := b.do(http.MethodGet, "/", "", nil, nil)
	if code != http.StatusOK || !contains(body, `<script type="module" src="/ui/assets/app.js?v=`) {
		t.Fatalf("GET /: %d %.200s", code, body)
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	// Every asset index.html names is served, versioned and immutable.
	for _, f := range []string{"app.js", "core.js", "views.js", "trace.js", "i18n.js", "ui.js", "kinds.js", "terminal.js", "style.css", "icon.svg"} {
		i := strings.Index(string(body), "/ui/assets/"+f+"?v=")
		if i < 0 {
			t.Fatalf("index.html does not name %s", f)
		}
		u := string(body[i:])
		u = u[:strings.IndexByte(u, '"')]
		code, data, h := b.do(http.MethodGet, u, "", nil, nil)
		if code != http.StatusOK || len(data) == 0 || !strings.Contains(h.Get("Cache-Control"), "immutable") {
			t.Fatalf("GET %s: %d, %d bytes, cache %q", u, code, len(data), h.Get("Cache-Control"))
		}
	}
	// The API keeps its paths.
	if code, _, _ := b.do(http.MethodGet, "/healthz", "", nil, nil); code != http.StatusOK {
		t.Fatalf("/healthz: %d", code)
	}
	if code, _, _ := b.do(http.MethodGet, "/api/v1/namespaces", "", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("/api/v1/namespaces without a token: %d", code)
	}
}

func TestLoginCookie(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	if code, _, _ := b.do(http.MethodGet, "/ui/session", "", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("session before login: %d", code)
	}
	code, si, hdr := b.login(ts.Bundle().AdminToken)
	if code != http.StatusOK || si.User != "admin" || si.ReadOnly || si.CSRF == "" {
		t.Fatalf("login: %d %+v", code, si)
	}
	sc := hdr.Values("Set-Cookie")
	if len(sc) != 1 {
		t.Fatalf("Set-Cookie: %q", sc)
	}
	for _, want := range []string{web.CookieName + "=", "Path=/", "HttpOnly", "Secure", "SameSite=Strict"} {
		if !strings.Contains(sc[0], want) {
			t.Errorf("cookie %q lacks %q", sc[0], want)
		}
	}
	if strings.Contains(sc[0], ts.Bundle().AdminToken) {
		t.Fatal("the cookie holds the token in clear")
	}
	code, data, _ := b.do(http.MethodGet, "/ui/session", "", nil, nil)
	if code != http.StatusOK || !contains(data, `"user":"admin"`) {
		t.Fatalf("session: %d %s", code, data)
	}
	// Logout ends it.
	if code, _, _ := b.do(http.MethodPost, "/ui/logout", "", nil, nil); code != http.StatusNoContent {
		t.Fatalf("logout: %d", code)
	}
	if code, _, _ := b.do(http.MethodGet, "/ui/session", "", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("session after logout: %d", code)
	}
}

func TestWrongTokenRefused(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	for name, tok := range map[string]string{
		"wrong":      "not-a-token",
		"empty":      "",
		"join token": ts.Bundle().NodeToken, // authenticates to the API, but may not use the dashboard
		"admin+1":    ts.Bundle().AdminToken + "x",
	} {
		t.Run(name, func(t *testing.T) {
			b := newBrowserish(t, ts)
			code, _, hdr := b.login(tok)
			if code != http.StatusUnauthorized {
				t.Fatalf("login: %d", code)
			}
			if len(hdr.Values("Set-Cookie")) != 0 {
				t.Fatalf("a refused login set a cookie: %q", hdr.Values("Set-Cookie"))
			}
			if code, _, _ := b.do(http.MethodGet, "/ui/proxy/api/v1/namespaces", "", nil, nil); code != http.StatusUnauthorized {
				t.Fatalf("proxy after refused login: %d", code)
			}
		})
	}
}

func TestLoginRefusesCrossSiteAndForms(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	body, _ := json.Marshal(map[string]string{"token": ts.Bundle().AdminToken})
	if code, _, _ := b.do(http.MethodPost, "/ui/login", "application/json", body, map[string]string{"Origin": "https://evil.example"}); code != http.StatusForbidden {
		t.Fatalf("cross-origin login: %d", code)
	}
	if code, _, _ := b.do(http.MethodPost, "/ui/login", "application/json", body, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": ""}); code != http.StatusForbidden {
		t.Fatalf("cross-site login: %d", code)
	}
	form := []byte("token=" + ts.Bundle().AdminToken)
	if code, _, _ := b.do(http.MethodPost, "/ui/login", "application/x-www-form-urlencoded", form, nil); code != http.StatusUnsupportedMediaType {
		t.Fatalf("form login: %d", code)
	}
}

func TestCSRF(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().AdminToken)
	good := b.csrf
	path := "/ui/proxy/api/v1/namespaces/default/services"
	cases := []struct {
		name string
		hdr  map[string]string
	}{
		{"no token", map[string]string{web.CSRFHeader: ""}},
		{"wrong token", map[string]string{web.CSRFHeader: good[:len(good)-2] + "AA"}},
		{"other origin", map[string]string{"Origin": "https://evil.example"}},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}},
	}
	for i, c := range cases {
		name := "csrf" + string(rune('a'+i))
		code, data, _ := b.do(http.MethodPost, path, "application/json", svcJSON(name, 80), c.hdr)
		if code != http.StatusForbidden {
			t.Errorf("%s: HTTP %d %s", c.name, code, data)
		}
		var s api.Service
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resServices, "default", name, &s); !client.IsNotFound(err) {
			t.Errorf("%s: the service exists (err %v)", c.name, err)
		}
	}
	// A second session's CSRF token does not fit the first.
	b2 := newBrowserish(t, ts)
	b2.mustLogin(ts.Bundle().AdminToken)
	if code, _, _ := b.do(http.MethodPost, path, "application/json", svcJSON("csrfx", 80), map[string]string{web.CSRFHeader: b2.csrf}); code != http.StatusForbidden {
		t.Errorf("another session's CSRF token: HTTP %d", code)
	}
	// With the right token the write goes through, as the admin.
	code, data, _ := b.do(http.MethodPost, path, "application/json", svcJSON("good", 80), nil)
	if code != http.StatusCreated {
		t.Fatalf("create with CSRF token: %d %s", code, data)
	}
	var s api.Service
	if err := ts.Client().Get(ctxT(t, 5*time.Second), resServices, "default", "good", &s); err != nil || s.Spec.ClusterIP == "" {
		t.Fatalf("created service: %v %+v", err, s.Spec)
	}
}

func TestReadOnlySession(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	si := b.mustLogin(ts.Bundle().DashboardToken)
	if !si.ReadOnly || si.User != "system:dashboard" {
		t.Fatalf("dashboard token session: %+v", si)
	}
	if code, data, _ := b.do(http.MethodGet, "/ui/proxy/api/v1/namespaces", "", nil, nil); code != http.StatusOK || !contains(data, "NamespaceList") {
		t.Fatalf("read-only list: %d %.200s", code, data)
	}
	// The API's authorizer refuses the write, with the session's own token.
	code, data, _ := b.do(http.MethodPost, "/ui/proxy/api/v1/namespaces/default/services", "application/json", svcJSON("ro", 80), nil)
	if code != http.StatusForbidden || !contains(data, "system:dashboard") {
		t.Fatalf("read-only create: %d %s", code, data)
	}
	code, data, _ = b.do(http.MethodPost, "/ui/apply", "application/yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: ro2}\nspec: {ports: [{port: 80}]}\n"), nil)
	if code != http.StatusOK || !contains(data, `"action":"error"`) {
		t.Fatalf("read-only apply: %d %s", code, data)
	}
	for _, name := range []string{"ro", "ro2"} {
		var s api.Service
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resServices, "default", name, &s); !client.IsNotFound(err) {
			t.Fatalf("service %s exists after a read-only write (err %v)", name, err)
		}
	}
}

func TestTamperedCookieRefused(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().AdminToken)
	u := b.hc.Jar.Cookies(mustURL(t, ts.URL()))
	if len(u) != 1 {
		t.Fatalf("cookies: %v", u)
	}
	v := []byte(u[0].Value)
	v[len(v)/2] ^= 1
	req, _ := http.NewRequest(http.MethodGet, ts.URL()+"/ui/session", nil)
	req.AddCookie(&http.Cookie{Name: web.CookieName, Value: string(v)})
	resp, err := (&http.Client{Transport: b.hc.Transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("tampered cookie: %d", resp.StatusCode)
	}
}

func TestSessionSurvivesRestart(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().AdminToken)
	ts.Restart()
	if ts.URL() != b.base {
		t.Fatalf("restarted on %s, not %s", ts.URL(), b.base)
	}
	if code, data, _ := b.do(http.MethodGet, "/ui/session", "", nil, nil); code != http.StatusOK {
		t.Fatalf("session after restart: %d %s", code, data)
	}
	if code, _, _ := b.do(http.MethodPost, "/ui/proxy/api/v1/namespaces/default/services", "application/json", svcJSON("after", 80), nil); code != http.StatusCreated {
		t.Fatalf("write after restart: %d", code)
	}
}

func TestProxyOnlyReachesTheAPI(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().AdminToken)
	for _, p := range []string{"/ui/proxy/metrics", "/ui/proxy/skiff/v1/nodes/x/token", "/ui/proxy/api/v1/../../metrics", "/ui/proxy/ui/session"} {
		if code, _, _ := b.do(http.MethodGet, p, "", nil, nil); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("GET %s: %d", p, code)
		}
	}
	if code, data, _ := b.do(http.MethodGet, "/ui/proxy/readyz", "", nil, nil); code != http.StatusOK {
		t.Errorf("readyz: %d %s", code, data)
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct{ name, data string }

// readSSE sends the stream's events to ch until the body ends.
func readSSE(body *bufio.Reader, ch chan<- sseEvent) {
	defer close(ch)
	var ev sseEvent
	for {
		line, err := body.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev.name != "" || ev.data != "" {
				ch <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[len("data: "):]
		}
	}
}

func TestWatchStream(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().DashboardToken) // reading is enough
	ctx := ctxT(t, 20*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL()+"/ui/watch", nil)
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("watch: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sseEvent, 64)
	go readSSE(bufio.NewReader(resp.Body), ch)
	next := func(what string, ok func(sseEvent) bool) sseEvent {
		t.Helper()
		for {
			select {
			case ev, open := <-ch:
				if !open {
					t.Fatalf("stream ended waiting for %s", what)
				}
				if ok(ev) {
					return ev
				}
			case <-ctx.Done():
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	next("reset", func(e sseEvent) bool { return e.name == "reset" })
	synced := map[string]bool{}
	next("every initial-events-end bookmark", func(e sseEvent) bool {
		if strings.Contains(e.data, `"BOOKMARK"`) && strings.Contains(e.data, "initial-events-end") {
			synced[e.name] = true
		}
		return len(synced) == 9 // namespaces ... events, configmaps, serviceaccounts
	})
	if err := ts.Client().Create(ctx, resServices, "default", service("live", 80)); err != nil {
		t.Fatal(err)
	}
	ev := next("the new service", func(e sseEvent) bool { return e.name == "services" && strings.Contains(e.data, `"name":"live"`) })
	var we struct {
		Type   string      `json:"type"`
		Object api.Service `json:"object"`
	}
	if err := json.Unmarshal([]byte(ev.data), &we); err != nil || we.Type != "ADDED" || we.Object.Spec.ClusterIP == "" {
		t.Fatalf("event %s: %v", ev.data, err)
	}
	// A server stop ends the stream (the browser then reconnects).
	go ts.Stop()
	for range ch {
	}
}

func TestApply(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().AdminToken)
	manifest := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
spec:
  replicas: 2
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
      - name: web
        image: busybox:1.36
---
apiVersion: v1
kind: Service
metadata:
  name: hello
  namespace: kube-public
spec:
  selector: {app: hello}
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Frobnicator
metadata: {name: x}
`
	type result struct {
		Kind, Namespace, Name, Action, Message string
	}
	apply := func(m string) []result {
		t.Helper()
		code, data, _ := b.do(http.MethodPost, "/ui/apply", "application/yaml", []byte(m), nil)
		if code != http.StatusOK {
			t.Fatalf("apply: %d %s", code, data)
		}
		var out struct{ Results []result }
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		return out.Results
	}
	got := apply(manifest)
	if len(got) != 3 || got[0].Action != "created" || got[0].Namespace != "default" || got[1].Action != "created" || got[1].Namespace != "kube-public" || got[2].Action != "error" {
		t.Fatalf("first apply: %+v", got)
	}
	got = apply(strings.Replace(manifest, "replicas: 2", "replicas: 4", 1))
	if got[0].Action != "configured" || got[1].Action != "unchanged" {
		t.Fatalf("second apply: %+v", got)
	}
	var d api.Deployment
	if err := ts.Client().Get(ctxT(t, 5*time.Second), resDeploys, "default", "hello", &d); err != nil || *d.Spec.Replicas != 4 {
		t.Fatalf("deployment after apply: %v %v", err, d.Spec.Replicas)
	}
	if code, data, _ := b.do(http.MethodPost, "/ui/apply", "application/yaml", []byte("a: [b"), nil); code != http.StatusBadRequest {
		t.Fatalf("bad YAML: %d %s", code, data)
	}
}

// TestTraceFromHandler: the hook the server wires asks the trace route,
// in process, with the session's token, and the dashboard passes the
// route's errors on. The route here is a stand-in that checks what it is
// asked (the real one is the server's).
func TestTraceFromHandler(t *testing.T) {
	var asked []string
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("Authorization"))
		if r.URL.Path != "/skiff/v1/namespaces/default/pods/client/trace" || r.URL.Query().Get("url") != "http://web:80" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"kind":"Status","message":"pods \"x\" not found","code":404}`))
			return
		}
		w.Write(traceFixture(t))
	})
	f := web.TraceFromHandler(route)
	tr, err := f(context.Background(), "tok", "default", "client", "http://web:80")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Service == nil || tr.Service.IP != "10.96.0.20" || len(tr.Endpoints) != 2 || tr.Rules.Mode != "iptables" {
		t.Fatalf("trace: %+v", tr)
	}
	_, err = f(context.Background(), "tok", "default", "x", "http://web:80")
	var he *web.HTTPError
	if !errors.As(err, &he) || he.Code != http.StatusNotFound {
		t.Fatalf("missing pod: %v", err)
	}
	if len(asked) != 2 || asked[0] != "/skiff/v1/namespaces/default/pods/client/trace?url=http%3A%2F%2Fweb%3A80 Bearer tok" {
		t.Fatalf("asked %q", asked)
	}
}

// TestTraceThroughServer: on a server whose trace route is not there yet
// (or refuses), the dashboard answers the route's status, not a 500.
func TestTraceThroughServer(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	si := b.mustLogin(ts.Bundle().AdminToken)
	if !si.Trace {
		t.Fatal("the server wires no trace source")
	}
	code, data, _ := b.do(http.MethodGet, "/ui/trace?namespace=default&pod=nope&url=http://web", "", nil, nil)
	if code < 400 || code >= 500 || !json.Valid(data) {
		t.Fatalf("trace of a missing pod: %d %s", code, data)
	}
	if code, _, _ := b.do(http.MethodGet, "/ui/trace?namespace=default", "", nil, nil); code != http.StatusBadRequest {
		t.Fatalf("trace without pod: %d", code)
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestTokenPrintedAtFirstStart: the first start logs the dashboard's
// read-only token and URL; a restart logs the URL and the token file only.
func TestTokenPrintedAtFirstStart(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	logged := func() string { // what was logged since the last call
		mu.Lock()
		defer mu.Unlock()
		defer buf.Reset()
		return buf.String()
	}
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	ts := servertest.Start(t, opts)
	tok := ts.Bundle().DashboardToken
	ts.Stop()
	first := logged()
	if !strings.Contains(first, "token="+tok) || !strings.Contains(first, "msg=dashboard url="+ts.URL()+"/") {
		t.Fatalf("first start did not print the dashboard token and URL:\n%s", first)
	}
	ts.Restart()
	ts.Stop()
	second := logged()
	if strings.Contains(second, tok) || !strings.Contains(second, "tokens/dashboard") {
		t.Fatalf("second start:\n%s", second)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestRotatedTokenEndsSession: every request re-checks the session's
// token, so a token replaced in the data dir (and a restart) ends the
// sessions made with the old one, though the cookie still opens.
func TestRotatedTokenEndsSession(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().AdminToken)
	ts.Stop()
	if err := os.WriteFile(filepath.Join(ts.DataDir(), "tokens", "admin"), []byte("a-new-admin-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts.Restart()
	if ts.Bundle().AdminToken != "a-new-admin-token-0123456789abcdef" {
		t.Fatalf("admin token after rotation: %q", ts.Bundle().AdminToken)
	}
	if code, _, _ := b.do(http.MethodGet, "/ui/session", "", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("session with the old token: %d", code)
	}
	b.mustLogin("a-new-admin-token-0123456789abcdef")
}

// TestApplyThreeWay: the dashboard's apply is kubectl's client-side apply.
// A field removed from the manifest (a label, an env var, a Service port,
// replicas) is removed from the object; a field someone else set (an
// annotation, through the API) stays; the same manifest again is
// "unchanged"; an object made without apply is patched and gets the
// annotation.
func TestApplyThreeWay(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().AdminToken)
	type result struct {
		Kind, Namespace, Name, Action, Message string
	}
	apply := func(m string) []result {
		t.Helper()
		code, data, _ := b.do(http.MethodPost, "/ui/apply?namespace=kube-public", "application/yaml", []byte(m), nil)
		if code != http.StatusOK {
			t.Fatalf("apply: %d %s", code, data)
		}
		var out struct{ Results []result }
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Results {
			if r.Action == "error" {
				t.Fatalf("apply: %+v", r)
			}
		}
		return out.Results
	}
	actions := func(rs []result) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Namespace+"/"+r.Name+" "+r.Action)
		}
		return strings.Join(s, ", ")
	}
	const v1 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: app, tier: front}
spec:
  replicas: 3
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      containers:
      - name: web
        image: busybox:1.36
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
---
apiVersion: v1
kind: Service
metadata:
  name: app
  labels: {app: app, tier: front}
spec:
  selector: {app: app}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: metrics, port: 9090}
`
	if got := actions(apply(v1)); got != "kube-public/app created, kube-public/app created" {
		t.Fatalf("first apply: %s", got)
	}
	ctx := ctxT(t, 20*time.Second)
	var d api.Deployment
	if err := ts.Client().Get(ctx, resDeploys, "kube-public", "app", &d); err != nil {
		t.Fatal(err)
	}
	la := d.Annotations[web.LastAppliedAnnotation]
	var rec map[string]any
	if err := json.Unmarshal([]byte(la), &rec); err != nil || !strings.HasSuffix(la, "\n") || strings.Contains(la, "last-applied") {
		t.Fatalf("last-applied annotation %q: %v", la, err)
	}
	if md := rec["metadata"].(map[string]any); md["namespace"] != "kube-public" || md["name"] != "app" {
		t.Fatalf("the record's metadata: %v", md)
	}
	// Someone else sets an annotation and a label on the Service.
	patch := []byte(`{"metadata":{"annotations":{"owner":"ops"},"labels":{"extra":"yes"}}}`)
	if err := ts.Client().Patch(ctx, resServices, "kube-public", "app", client.MergePatchType, patch, nil); err != nil {
		t.Fatal(err)
	}
	if got := actions(apply(v1)); got != "kube-public/app unchanged, kube-public/app unchanged" {
		t.Fatalf("the same manifest again: %s", got)
	}

	// v2 removes replicas, the label tier, env B and the metrics port.
	v2 := strings.NewReplacer("  replicas: 3\n", "", ", tier: front", "", "        - {name: B, value: \"2\"}\n", "", "  - {name: metrics, port: 9090}\n", "").Replace(v1)
	if got := actions(apply(v2)); got != "kube-public/app configured, kube-public/app configured" {
		t.Fatalf("apply v2: %s", got)
	}
	if err := ts.Client().Get(ctx, resDeploys, "kube-public", "app", &d); err != nil {
		t.Fatal(err)
	}
	env := d.Spec.Template.Spec.Containers[0].Env
	if *d.Spec.Replicas != 1 || d.Labels["tier"] != "" || d.Labels["app"] != "app" || len(env) != 1 || env[0].Name != "A" {
		t.Errorf("deployment after v2: replicas %d (want the default 1), labels %v, env %+v", *d.Spec.Replicas, d.Labels, env)
	}
	var s api.Service
	if err := ts.Client().Get(ctx, resServices, "kube-public", "app", &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Name != "http" || s.Labels["tier"] != "" || s.Labels["extra"] != "yes" || s.Annotations["owner"] != "ops" {
		t.Errorf("service after v2: ports %+v labels %v annotations %v", s.Spec.Ports, s.Labels, s.Annotations)
	}

	// An object created without apply: patched (nothing it has is deleted,
	// there being no record), and recorded from now on.
	if err := ts.Client().Create(ctx, resServices, "kube-public", service("plain", 80)); err != nil {
		t.Fatal(err)
	}
	const plain = "apiVersion: v1\nkind: Service\nmetadata: {name: plain, labels: {x: z}}\nspec: {selector: {app: plain}, ports: [{port: 80, targetPort: 8080}]}\n"
	if got := actions(apply(plain)); got != "kube-public/plain configured" {
		t.Fatalf("apply over a created Service: %s", got)
	}
	if err := ts.Client().Get(ctx, resServices, "kube-public", "plain", &s); err != nil || s.Labels["x"] != "z" || s.Annotations[web.LastAppliedAnnotation] == "" {
		t.Fatalf("plain after apply: %v %v %v", err, s.Labels, s.Annotations)
	}

	// generateName cannot be applied.
	code, data, _ := b.do(http.MethodPost, "/ui/apply", "application/yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {generateName: x-}\nspec: {ports: [{port: 80}]}\n"), nil)
	if code != http.StatusOK || !contains(data, "cannot use generate name with apply") {
		t.Fatalf("generateName: %d %s", code, data)
	}
}
