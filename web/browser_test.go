package web_test

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
	"github.com/skiff-dev/skiff/web"
)

// chromiumPath finds Debian's chromium ($SKIFF_CHROMIUM overrides), or
// skips the test.
func chromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SKIFF_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("SKIFF_CHROMIUM=%s: %v: browser tests skipped", p, err)
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install --no-install-recommends chromium, or set SKIFF_CHROMIUM): browser tests skipped")
	return ""
}

// spkiPin is the base64 SHA-256 of the serving certificate's public key:
// chromium trusts exactly that key (--ignore-certificate-errors-spki-list)
// and no other certificate error.
func spkiPin(t testing.TB, cfg *tls.Config) string {
	t.Helper()
	c, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// newBrowser starts headless chromium with docs/platform.md's flags ("Other tools"), HOME and
// TMPDIR in a temp dir, and returns a tab's context; it stops at cleanup.
func newBrowser(t testing.TB, pin string) context.Context {
	t.Helper()
	exe := chromiumPath(t)
	home := t.TempDir()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Headless, chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("ignore-certificate-errors-spki-list", pin),
		chromedp.UserDataDir(filepath.Join(home, "profile")),
		chromedp.WindowSize(1280, 900),
		chromedp.Env("HOME="+home, "TMPDIR="+home),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	// Uncaught script errors and Content-Security-Policy violations fail
	// the test (HTTP errors the tests cause on purpose do not).
	var mu sync.Mutex
	var problems []string
	err := chromedp.Listen(ctx, func(ev any) {
		var p string
		switch ev := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			p = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				p += " " + ev.ExceptionDetails.Exception.Description
			}
		case *cdplog.EventEntryAdded:
			if strings.Contains(ev.Entry.Text, "Content Security Policy") {
				p = "CSP: " + ev.Entry.Text
			}
		}
		if p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("in the page: %s", p)
		}
	})
	return ctx
}

// artifacts is where screenshots go: $ARTIFACTS/web when set, else
// web/testdata/screenshots (ignored by git).
func artifacts(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("testdata", "screenshots")
	if a := os.Getenv("ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "web")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// step runs actions with a deadline and fails the test with what it was doing.
func step(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// clickLive clicks the first element matching a CSS selector in one
// script: a row of a live table is redrawn on every watch event, and a
// node found by one CDP call can be gone by the next ("No node with given
// id found"), which chromedp.Click, a query then a click, runs into.
func clickLive(sel string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel)
	return chromedp.Evaluate[chromedp.Void](`document.querySelector(` + string(q) + `).click()`)
}

func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS polls a JavaScript condition (20 s).
func waitJS(t testing.TB, ctx context.Context, what, cond string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 25*time.Second)
	defer cancel()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := chromedp.Run(c, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Until(deadline))))
		// A poll that began as the page was being replaced (a navigation)
		// lost its execution context: poll again in the new page.
		if err != nil && strings.Contains(err.Error(), "Cannot find context with specified id") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err == nil {
			return
		}
		dump, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('main').innerText.slice(0, 1500)`))
		t.Fatalf("waiting for %s (%s): %v\npage: %s", what, cond, err, dump)
	}
}

func shot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(artifacts(t), name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func goTo(t testing.TB, ctx context.Context, hash string) {
	t.Helper()
	eval[chromedp.Void](t, ctx, fmt.Sprintf("location.hash = %q", hash))
}

func login(t testing.TB, ctx context.Context, token string) {
	t.Helper()
	step(t, ctx, "log in",
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('token').value = ''`),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.CSS("#login-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.ID("nav")),
	)
	waitJS(t, ctx, "the live stream", `document.getElementById('live').classList.contains('on')`)
}

func TestBrowser(t *testing.T) {
	chromiumPath(t)
	ts := servertest.Start(t, testOptions()) // Restart keeps the origin
	fakeNode(t, ts.Client(), "node-a")
	ctx := newBrowser(t, spkiPin(t, ts.Bundle().ServerTLS))
	base := ts.URL()

	if !t.Run("wrong token refused", func(t *testing.T) {
		step(t, ctx, "open", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("token")))
		checkContrast(t, ctx, "login")
		shot(t, ctx, "login")
		step(t, ctx, "submit a wrong token",
			chromedp.SendKeys(chromedp.ID("token"), "not-the-token"),
			chromedp.Click(chromedp.CSS("#login-form button[type=submit]")))
		waitJS(t, ctx, "the refusal", `document.getElementById('login-error').textContent.length > 0`)
		if !eval[bool](t, ctx, `document.getElementById('nav').hidden`) {
			t.Fatal("the navigation shows after a refused login")
		}
		if code := eval[int](t, ctx, `fetch('/ui/session').then(r => r.status)`); code != http.StatusUnauthorized {
			t.Fatalf("session after a refused login: %d", code)
		}
	}) {
		return
	}

	if !t.Run("log in", func(t *testing.T) {
		// By keyboard: the token, then Enter.
		step(t, ctx, "log in by keyboard",
			chromedp.Evaluate[chromedp.Void](`document.getElementById('token').value = ''`),
			chromedp.SendKeys(chromedp.ID("token"), ts.Bundle().AdminToken+kb.Enter),
			chromedp.WaitVisible(chromedp.ID("nav")))
		waitJS(t, ctx, "the live stream", `document.getElementById('live').classList.contains('on')`)
		waitJS(t, ctx, "the overview", `document.querySelectorAll('#cards .card').length === 4`)
		if got := eval[string](t, ctx, `document.getElementById('who').textContent`); got != "admin" {
			t.Fatalf("who: %q", got)
		}
		// Offline: nothing was fetched from another origin (no CDN).
		if foreign := eval[[]string](t, ctx, `performance.getEntriesByType('resource').map((e) => e.name).concat(performance.getEntriesByType('navigation').map((e) => e.name)).filter((u) => !u.startsWith(location.origin + '/'))`); len(foreign) > 0 {
			t.Errorf("fetched from another origin: %q", foreign)
		}
		shot(t, ctx, "overview")
	}) {
		return
	}

	if !t.Run("keyboard", func(t *testing.T) {
		// Tab from the top of the page reaches the skip link first, then
		// every page of the navigation, the language switch and log out.
		eval[chromedp.Void](t, ctx, `document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`)
		var seen []string
		for i := 0; i < 18; i++ {
			step(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab))
			seen = append(seen, eval[string](t, ctx, `(() => { const e = document.activeElement; return e.id || e.getAttribute('href') || e.className || e.tagName; })()`))
		}
		if seen[0] != "#main" {
			t.Errorf("the first Tab stop is %q, want the skip link", seen[0])
		}
		for _, want := range []string{"#/overview", "#/services", "#/deployments", "#/pods", "#/configmaps", "#/secrets", "#/serviceaccounts", "#/nodes", "#/events", "#/create", "lang", "logout"} {
			if !slices.Contains(seen, want) {
				t.Errorf("Tab never reaches %q: %q", want, seen)
			}
		}
		// Enter on a navigation link opens the page and moves the focus
		// to its heading.
		step(t, ctx, "focus Nodes", chromedp.Focus(chromedp.CSS(`#nav a[href="#/nodes"]`)), chromedp.KeyEvent(kb.Enter))
		waitJS(t, ctx, "the nodes page, focused", `location.hash === '#/nodes' && document.activeElement === document.querySelector('#view h1')`)
		// The focus is visible (an outline) on a focused control.
		step(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab))
		if o := eval[string](t, ctx, `getComputedStyle(document.activeElement).outlineStyle`); o == "none" {
			t.Errorf("no focus outline on %s", eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 80)`))
		}
	}) {
		return
	}

	if !t.Run("service appears live", func(t *testing.T) {
		goTo(t, ctx, "#/services")
		waitJS(t, ctx, "the services table", `document.querySelector('#svc-table [role=table]')`)
		eval[chromedp.Void](t, ctx, `window.__noReload = 42`)
		if err := ts.Client().Create(ctxT(t, 10*time.Second), resServices, "default", service("live-svc", 80)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "live-svc's row", `document.querySelector('[data-service="default/live-svc"]') && window.__noReload === 42`)
		// The namespace filter.
		step(t, ctx, "filter kube-public", chromedp.SetValue(chromedp.ID("ns-filter"), "kube-public"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('ns-filter').dispatchEvent(new Event('change'))`))
		waitJS(t, ctx, "an empty kube-public", `location.hash === '#/services?ns=kube-public' && !document.querySelector('[data-service]')`)
		goTo(t, ctx, "#/services")
		waitJS(t, ctx, "all namespaces", `document.querySelector('[data-service="default/live-svc"]')`)
		var s api.Service
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resServices, "default", "live-svc", &s); err != nil {
			t.Fatal(err)
		}
		if row := eval[string](t, ctx, `document.querySelector('[data-service="default/live-svc"]').textContent`); !strings.Contains(row, s.Spec.ClusterIP) {
			t.Fatalf("row %q lacks the ClusterIP %s", row, s.Spec.ClusterIP)
		}
	}) {
		return
	}

	if !t.Run("scale a deployment and see the endpoints", func(t *testing.T) {
		ctxA := ctxT(t, 10*time.Second)
		if err := ts.Client().Create(ctxA, resDeploys, "default", deployment("web", 1)); err != nil {
			t.Fatal(err)
		}
		if err := ts.Client().Create(ctxA, resServices, "default", service("web", 80)); err != nil {
			t.Fatal(err)
		}
		endpoints := `(document.querySelector('[data-service="default/web"] [data-endpoints]') || {dataset: {}}).dataset.endpoints`
		waitJS(t, ctx, "web at 1/1 endpoints", endpoints+` === '1/1'`)
		goTo(t, ctx, "#/deployments")
		sel := `input[data-dep="default/web"]`
		waitJS(t, ctx, "the scale input", `document.querySelector('`+sel+`')`)
		// One script sets the value and clicks: the page redraws on every
		// watch event, and a node looked up by one CDP call can be gone by
		// the next ("No node with given id found").
		step(t, ctx, "scale to 3", chromedp.Evaluate[chromedp.Void](`(() => {
			document.querySelector('`+sel+`').value = '3';
			document.querySelector('button[data-act="scale"][data-dep="default/web"]').click();
		})()`))
		waitJS(t, ctx, "the scaled message", `document.getElementById('dep-msg').className === 'okmsg'`)
		var d api.Deployment
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resDeploys, "default", "web", &d); err != nil || *d.Spec.Replicas != 3 {
			t.Fatalf("deployment after scaling: %v %v", err, d.Spec.Replicas)
		}
		waitJS(t, ctx, "3/3 ready on the deployments page", `(document.querySelector('[data-deployment="default/web"] [data-ready]') || {dataset: {}}).dataset.ready === '3/3'`)
		shot(t, ctx, "deployments")
		goTo(t, ctx, "#/services")
		waitJS(t, ctx, "web at 3/3 endpoints", endpoints+` === '3/3'`)
		shot(t, ctx, "services")
	}) {
		return
	}

	if !t.Run("service detail", func(t *testing.T) {
		goTo(t, ctx, "#/services/default/web")
		waitJS(t, ctx, "the slices and the pods by node", `document.querySelectorAll('#svc-slices tbody tr').length === 3 && document.querySelectorAll('#svc-pods li').length === 3`)
		// This server's trace route is not there: the page says so.
		step(t, ctx, "trace", chromedp.Click(chromedp.ID("trace-run")))
		waitJS(t, ctx, "the trace error", `document.getElementById('trace-msg').className === 'error'`)
		// Restart (a rollout: new pods), from the deployments page.
		goTo(t, ctx, "#/deployments")
		waitJS(t, ctx, "the restart button", `document.querySelector('button[data-act="restart"][data-dep="default/web"]')`)
		step(t, ctx, "restart", clickLive(`button[data-act="restart"][data-dep="default/web"]`))
		waitJS(t, ctx, "the restarted message", `document.getElementById('dep-msg').textContent.includes('restarting')`)
		var d api.Deployment
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resDeploys, "default", "web", &d); err != nil || d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
			t.Fatalf("deployment after restart: %v %v", err, d.Spec.Template.Annotations)
		}
	}) {
		return
	}

	if !t.Run("pages", func(t *testing.T) {
		// The contrast check can fail: light grey text on white is caught.
		goTo(t, ctx, "#/overview")
		waitJS(t, ctx, "the overview", `document.getElementById('cards')`)
		eval[chromedp.Void](t, ctx, `(() => { const p = document.createElement('p'); p.id = 'faint'; p.style.color = '#aaa'; p.textContent = 'faint text'; document.getElementById('view').append(p); })()`)
		if bad := eval[[]string](t, ctx, contrastJS); len(bad) != 1 || !strings.Contains(bad[0], "faint text") {
			t.Errorf("the contrast check on grey text: %q", bad)
		}
		eval[chromedp.Void](t, ctx, `document.getElementById('faint').remove()`)
		for _, p := range []struct{ hash, ready, name string }{
			{"#/overview", `document.querySelector('#ov-nodes tbody tr') && document.querySelector('#ov-attention a')`, "overview"},
			{"#/pods", `document.querySelectorAll('#pod-table tbody tr').length >= 3`, "pods"},
			{"#/nodes", `document.querySelector('#node-table tbody tr') && document.querySelector('#node-table tbody').textContent.includes('node-a')`, "nodes"},
			{"#/events", `document.querySelector('#ev-table')`, "events"},
			{"#/create", `document.getElementById('svc-form')`, "create"},
		} {
			goTo(t, ctx, p.hash)
			waitJS(t, ctx, p.name, p.ready)
			shot(t, ctx, p.name)
			// Accessibility basics: every control has a name, every image
			// a text alternative, and the page has one h1.
			unnamed := eval[[]string](t, ctx, `[...document.querySelectorAll('input, select, textarea, button')].filter(e => e.offsetParent !== null && !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim()).map(e => e.outerHTML.slice(0, 80))
				.concat([...document.querySelectorAll('img:not([alt])')].map(e => e.outerHTML))
				.concat(document.querySelectorAll('#view h1').length === 1 ? [] : ['h1 count ' + document.querySelectorAll('#view h1').length])`)
			if len(unnamed) > 0 {
				t.Errorf("%s: controls without a name: %q", p.name, unnamed)
			}
			checkContrast(t, ctx, p.name)
			if p.name == "pods" {
				// Logs: this server has no log source without an agent, and
				// the page says what the API answered.
				step(t, ctx, "logs", clickLive(`#pod-table button[data-logs]`))
				waitJS(t, ctx, "the logs panel", `!document.getElementById('logs').hidden && document.getElementById('logs-text').textContent !== '' && document.getElementById('logs-text').textContent !== 'Loading…'`)
				if got := eval[string](t, ctx, `document.activeElement.id`); got != "logs-text" {
					t.Errorf("focus after opening logs: %q", got)
				}
			}
		}
		// Chinese, then on a phone.
		step(t, ctx, "switch to Chinese", chromedp.SetValue(chromedp.ID("lang"), "zh"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('lang').dispatchEvent(new Event('change'))`))
		goTo(t, ctx, "#/services")
		waitJS(t, ctx, "Chinese", `document.querySelector('#nav a[href="#/services"]').textContent === '服务' && document.querySelector('#view h1').textContent === '服务'`)
		checkContrast(t, ctx, "services in Chinese")
		shot(t, ctx, "services-zh")
		step(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		// On a phone no page is wider than the screen: wide tables scroll
		// inside their own box.
		for _, h := range []string{"#/services", "#/services/default/web", "#/deployments", "#/pods", "#/nodes", "#/events", "#/create"} {
			goTo(t, ctx, h)
			waitJS(t, ctx, h, `document.querySelector('#view h1') && location.hash === '`+h+`'`)
			if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 400 {
				wide := eval[[]string](t, ctx, `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 392 && !e.closest('.scroll')).map((e) => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 8)`)
				t.Errorf("%s is %d px wide on a 390 px phone: %q", h, w, wide)
			}
		}
		shot(t, ctx, "create-phone-zh")
		goTo(t, ctx, "#/overview")
		waitJS(t, ctx, "overview", `document.querySelectorAll('#cards .card').length === 4`)
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 400 {
			t.Errorf("the overview is %d px wide on a 390 px phone", w)
		}
		checkContrast(t, ctx, "overview on a phone")
		shot(t, ctx, "overview-phone-zh")
		step(t, ctx, "desktop", chromedp.EmulateReset(), chromedp.SetValue(chromedp.ID("lang"), "en"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('lang').dispatchEvent(new Event('change'))`))
	}) {
		return
	}

	if !t.Run("create a service from the form", func(t *testing.T) {
		goTo(t, ctx, "#/create")
		step(t, ctx, "fill the form",
			chromedp.WaitVisible(chromedp.ID("svc-name")),
			chromedp.SendKeys(chromedp.ID("svc-name"), "form-svc"),
			chromedp.SendKeys(chromedp.ID("svc-selector"), "app=web"),
			chromedp.SetValue(chromedp.ID("svc-ports"), "8080:80/TCP"),
			chromedp.Click(chromedp.CSS("#svc-form button[type=submit]")))
		waitJS(t, ctx, "the created message", `document.getElementById('svc-msg').className === 'okmsg'`)
		var s api.Service
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resServices, "default", "form-svc", &s); err != nil || s.Spec.Ports[0].Port != 8080 || s.Spec.Selector["app"] != "web" {
			t.Fatalf("form-svc: %v %+v", err, s.Spec)
		}
		// The manifest box holds a Deployment and a Service "hello".
		step(t, ctx, "apply the sample manifest", chromedp.Click(chromedp.CSS("#apply-form button[type=submit]")))
		waitJS(t, ctx, "two created objects", `document.querySelectorAll('#apply-out li.okmsg').length === 2`)
		var d api.Deployment
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resDeploys, "default", "hello", &d); err != nil {
			t.Fatalf("applied deployment: %v", err)
		}
		// Again: nothing changed.
		step(t, ctx, "apply again", chromedp.Click(chromedp.CSS("#apply-form button[type=submit]")))
		waitJS(t, ctx, "two unchanged objects", `[...document.querySelectorAll('#apply-out li.okmsg')].filter((li) => li.textContent.endsWith(': unchanged')).length === 2`)
		// Into another namespace, for objects that name none.
		step(t, ctx, "pick kube-public", chromedp.SetValue(chromedp.ID("apply-ns"), "kube-public"),
			chromedp.Click(chromedp.CSS("#apply-form button[type=submit]")))
		waitJS(t, ctx, "two objects created in kube-public", `[...document.querySelectorAll('#apply-out li.okmsg')].filter((li) => li.textContent.includes('kube-public/hello: created')).length === 2`)
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resDeploys, "kube-public", "hello", &d); err != nil {
			t.Fatalf("deployment applied to kube-public: %v", err)
		}
	}) {
		return
	}

	if !t.Run("read-only session", func(t *testing.T) {
		step(t, ctx, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("token")))
		login(t, ctx, ts.Bundle().DashboardToken)
		goTo(t, ctx, "#/deployments")
		waitJS(t, ctx, "disabled scale buttons", `document.querySelector('button[data-act="scale"][data-dep="default/web"]') && document.querySelector('button[data-act="scale"][data-dep="default/web"]').disabled`)
		// Even a crafted write with the right CSRF token is refused by the API.
		code := eval[int](t, ctx, `fetch('/ui/session').then(r => r.json()).then(s => fetch('/ui/proxy/apis/apps/v1/namespaces/default/deployments/web', {method: 'PATCH', headers: {'Content-Type': 'application/merge-patch+json', 'X-Skiff-CSRF': s.csrf}, body: '{"spec":{"replicas":0}}'})).then(r => r.status)`)
		if code != http.StatusForbidden {
			t.Fatalf("read-only PATCH: %d", code)
		}
	}) {
		return
	}

	if !t.Run("recovers after a server restart", func(t *testing.T) {
		goTo(t, ctx, "#/services")
		waitJS(t, ctx, "the services table", `document.querySelector('[data-service="default/web"]')`)
		eval[chromedp.Void](t, ctx, `window.__noReload = 43`)
		ts.Stop()
		waitJS(t, ctx, "the page to notice", `!document.getElementById('live').classList.contains('on')`)
		ts.Restart()
		if err := ts.Client().Create(ctxT(t, 10*time.Second), resServices, "default", service("after-restart", 80)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "the service created after the restart", `document.querySelector('[data-service="default/after-restart"]') && window.__noReload === 43 && document.getElementById('live').classList.contains('on')`)
	}) {
		return
	}
}

// TestBrowserPacketPath draws the packet path of a service. The trace
// route computes a Trace on the client pod's node; this test's dashboard
// gets it from a recorded fixture (testdata/trace.json, the shape of
// api.Trace) through Config.Trace, which also checks what the page asked
// for. Everything else is real: the dashboard reads a real server over
// HTTPS on loopback.
func TestBrowserPacketPath(t *testing.T) {
	chromiumPath(t)
	ts := servertest.Start(t, testOptions())
	fakeNode(t, ts.Client(), "node-a")
	ctx := ctxT(t, 10*time.Second)
	if err := ts.Client().Create(ctx, resDeploys, "default", deployment("web", 2)); err != nil {
		t.Fatal(err)
	}
	if err := ts.Client().Create(ctx, resServices, "default", service("web", 80)); err != nil {
		t.Fatal(err)
	}
	client := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "client", Labels: map[string]string{"app": "client"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox:1.36"}}}}
	if err := ts.Client().Create(ctx, resPods, "default", client); err != nil {
		t.Fatal(err)
	}

	// A dashboard that reaches the real API over HTTPS, with the fixture
	// as its trace source.
	target, _ := url.Parse(ts.URL())
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ts.Bundle().CACertPEM)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	rp.FlushInterval = -1
	asked := make(chan string, 4)
	d, err := web.New(web.Config{
		API: rp,
		Authenticate: func(_ context.Context, tok string) (web.Identity, bool) {
			ok := subtle.ConstantTimeCompare([]byte(tok), []byte(ts.Bundle().AdminToken)) == 1
			return web.Identity{Name: "admin"}, ok
		},
		Trace: func(_ context.Context, token, ns, pod, u string) (*api.Trace, error) {
			asked <- ns + "/" + pod + " " + u
			if token != ts.Bundle().AdminToken {
				return nil, errors.New("wrong token")
			}
			var tr api.Trace
			if err := jsonUnmarshal(traceFixture(t), &tr); err != nil {
				return nil, err
			}
			return &tr, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: d, TLSConfig: ts.Bundle().ServerTLS.Clone()}
	go hs.Serve(tls.NewListener(ln, hs.TLSConfig))
	t.Cleanup(func() { hs.Close() })

	b := newBrowser(t, spkiPin(t, ts.Bundle().ServerTLS))
	step(t, b, "open", chromedp.Navigate("https://"+ln.Addr().String()+"/#/services/default/web"))
	login(t, b, ts.Bundle().AdminToken)
	waitJS(t, b, "two backends and the client pod running", `document.querySelectorAll('#svc-pods li').length === 2 && [...document.querySelectorAll('#trace-client option')].some(o => o.value === 'default/client')`)
	if v := eval[string](t, b, `document.getElementById('trace-client').value`); v != "default/client" {
		t.Fatalf("default client pod %q, want default/client (a running pod that is not a backend)", v)
	}
	if v := eval[string](t, b, `document.getElementById('trace-url').value`); v != "http://web:80" {
		t.Fatalf("default URL %q", v)
	}
	step(t, b, "trace", chromedp.Click(chromedp.ID("trace-run")))
	waitJS(t, b, "the drawn path", `document.querySelector('#trace-out .path svg')`)
	if got := <-asked; got != "default/client http://web:80" {
		t.Fatalf("the page asked for %q", got)
	}
	svg := eval[string](t, b, `document.querySelector('#trace-out svg').textContent`)
	for _, want := range []string{"client", "web", ".default.svc.cluster.local.", "→ 10.96.0.20", "10.96.0.20:80/TCP", "KUBE-SERVICES", "KUBE-SVC-LOLE4ISW44XBNF3G", "50% → 10.244.0.10:8080", "100% → 10.244.1.11:8080", "web-5d8f-abcde", "node-a", "node-b", "50%"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the drawing lacks %q: %s", want, svg)
		}
	}
	words := eval[string](t, b, `document.querySelector('#trace-out ol').textContent`)
	if !strings.Contains(words, "10.96.0.20:80") || !strings.Contains(words, "50% of new connections") {
		t.Errorf("the path in words: %s", words)
	}
	shot(t, b, "service-detail")

	// A trace that breaks early (an IP that is no Service) draws too, with
	// its warnings.
	html := eval[string](t, b, `import('/ui/assets/trace.js').then(m => m.drawTrace({kind: 'Trace', url: 'http://10.0.0.9:81', host: '10.0.0.9', port: 81, protocol: 'TCP', pod: {namespace: 'default', name: 'client', ip: '10.244.0.9', nodeName: 'node-a'}, warnings: ['10.0.0.9:81 is not a Service port <b>']}))`)
	for _, want := range []string{"no DNS (an IP)", "no Service matches", "no rules read", "10.0.0.9:81 is not a Service port &lt;b&gt;"} {
		if !strings.Contains(html, want) {
			t.Errorf("the broken trace lacks %q: %s", want, html)
		}
	}

	// An address outside the cluster: the egress step and its rules.
	html = eval[string](t, b, `import('/ui/assets/trace.js').then(m => m.drawTrace({kind: 'Trace', url: 'http://198.51.100.7', host: '198.51.100.7', port: 80, protocol: 'TCP', pod: {namespace: 'default', name: 'client', ip: '10.244.0.9', nodeName: 'node-a'}, egress: {masquerade: true, rules: ['-A SKIFF-EGRESS -j MASQUERADE']}}))`)
	for _, want := range []string{"Leaving the cluster", "masqueraded: the source becomes the node&#39;s address", "Egress rules as the kernel lists them", "-A SKIFF-EGRESS -j MASQUERADE"} {
		if !strings.Contains(html, want) {
			t.Errorf("the egress trace lacks %q: %s", want, html)
		}
	}
}

// contrastJS lists the visible text of the page whose contrast with its
// background is below WCAG 2's AA minimum: 4.5:1, or 3:1 for large text
// (24 px, or 18.66 px bold). The background is the composited background
// of the element's ancestors; SVG text's is the fill of the box it sits
// in. Disabled controls are exempt, as WCAG says.
const contrastJS = `(() => {
	const parse = (c) => {
		const m = /rgba?\(([^)]+)\)/.exec(c || '');
		if (!m) return null;
		const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
		return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
	};
	const over = (f, b) => ({r: f.r * f.a + b.r * (1 - f.a), g: f.g * f.a + b.g * (1 - f.a), b: f.b * f.a + b.b * (1 - f.a), a: 1});
	const lum = (c) => {
		const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
	};
	const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
	const background = (el) => {
		const layers = [];
		for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
			const c = parse(getComputedStyle(e).backgroundColor);
			if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
		}
		let bg = {r: 255, g: 255, b: 255, a: 1};
		for (const l of layers.reverse()) bg = over(l, bg);
		return bg;
	};
	const bad = [];
	const seen = new Set();
	const check = (el, fg, bg) => {
		const cs = getComputedStyle(el);
		const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight, 10) >= 700;
		const min = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
		const r = ratio(over(fg, bg), bg);
		if (r < min) {
			const what = el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().replace(/\s+/g, '.') : '') + ' "' + (el.textContent || el.value || '').trim().slice(0, 30) + '" ' + r.toFixed(2) + ':1 < ' + min;
			if (!seen.has(what)) { seen.add(what); bad.push(what); }
		}
	};
	const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
	for (const el of document.querySelectorAll('body *')) {
		if (!visible(el) || el.closest('[hidden]') || el.disabled || el.tagName === 'OPTION' || el.tagName === 'SCRIPT' || el.tagName === 'STYLE') continue;
		const svgText = el instanceof SVGTextElement;
		const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
		const control = ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName) && (el.value || '').trim();
		if (!own && !control) continue;
		if (svgText) {
			const box = el.parentElement && el.parentElement.querySelector(':scope > rect');
			const fill = box ? parse(getComputedStyle(box).fill) : null;
			check(el, parse(getComputedStyle(el).fill), fill && fill.a > 0 ? over(fill, background(el.closest('svg'))) : background(el.closest('svg')));
		} else if (!(el instanceof SVGElement)) {
			check(el, parse(getComputedStyle(el).color), background(el));
		}
	}
	return bad;
})()`

// checkContrast fails the test for text below WCAG AA contrast (see
// contrastJS).
func checkContrast(t testing.TB, ctx context.Context, page string) {
	t.Helper()
	if bad := eval[[]string](t, ctx, contrastJS); len(bad) > 0 {
		t.Errorf("%s: text below WCAG AA contrast: %q", page, bad)
	}
}

// TestBrowserLoginRateLimit: after a burst of wrong tokens from one
// address the login form says to wait (429), and a good token is refused
// too until then.
func TestBrowserLoginRateLimit(t *testing.T) {
	chromiumPath(t)
	ts := servertest.Start(t, testOptions())
	ctx := newBrowser(t, spkiPin(t, ts.Bundle().ServerTLS))
	step(t, ctx, "open", chromedp.Navigate(ts.URL()+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	// Ten wrong tokens, as the form posts them.
	codes := eval[[]int](t, ctx, `(async () => { const out = []; for (let i = 0; i < 10; i++) { const r = await fetch('/ui/login', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({token: 'guess-' + i})}); out.push(r.status); } return out; })()`)
	for i, c := range codes {
		if c != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d (all: %v)", i, c, codes)
		}
	}
	step(t, ctx, "submit the good token",
		chromedp.SendKeys(chromedp.ID("token"), ts.Bundle().AdminToken),
		chromedp.Click(chromedp.CSS("#login-form button[type=submit]")))
	waitJS(t, ctx, "the wait message", `document.getElementById('login-error').textContent.includes('wait a few seconds')`)
	if !eval[bool](t, ctx, `document.getElementById('nav').hidden`) {
		t.Fatal("logged in while the address has to wait")
	}
}
