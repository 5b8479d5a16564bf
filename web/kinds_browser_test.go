package web_test

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
	"github.com/skiff-dev/skiff/web"
)

var (
	resConfigMaps = api.Lookup(resources, "v1", "configmaps")
	resSAs        = api.Lookup(resources, "v1", "serviceaccounts")
)

// kindsFixture creates what the pages of the new kinds show: a ConfigMap
// (text and binary), a Secret, a ServiceAccount naming it, a pod web-0
// with hostname and subdomain "db" and a container port, the headless
// Service db that selects it, and a pod with a named port.
func kindsFixture(t *testing.T, ts *servertest.Server) {
	t.Helper()
	ctx := ctxT(t, 20*time.Second)
	c := ts.Client()
	no := false
	objs := []struct {
		res *api.ResourceInfo
		obj any
	}{
		{resConfigMaps, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "app-config"}, Data: map[string]string{"greeting": "hello <b>world</b>", "app.properties": "color=blue\nsize=3\n"}, BinaryData: map[string][]byte{"blob": {1, 2, 3}}}},
		{resSecrets, &api.Secret{ObjectMeta: api.ObjectMeta{Name: "db"}, Type: "kubernetes.io/basic-auth", Data: map[string][]byte{"password": []byte(secretValue), "username": []byte("admin")}}},
		{resSAs, &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "builder"}, Secrets: []api.ObjectReference{{Name: "db"}}, ImagePullSecrets: []api.LocalObjectReference{{Name: "regcred"}}, AutomountServiceAccountToken: &no}},
		{resPods, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web-0", Labels: map[string]string{"app": "db"}}, Spec: api.PodSpec{Hostname: "web-0", Subdomain: "db",
			Containers: []api.Container{{Name: "web", Image: "busybox:1.36", Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "dns", ContainerPort: 53, Protocol: "UDP"}}}, {Name: "sidecar", Image: "busybox:1.36"}}}}},
		{resServices, &api.Service{ObjectMeta: api.ObjectMeta{Name: "db"}, Spec: api.ServiceSpec{ClusterIP: api.ClusterIPNone, Selector: map[string]string{"app": "db"}, Ports: []api.ServicePort{{Name: "http", Port: 8080}}}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o.res, "default", o.obj.(api.Object)); err != nil {
			t.Fatalf("create %s: %v", o.res.Resource, err)
		}
	}
}

// checkPage runs the checks every page gets: one h1, every control
// named, WCAG AA contrast.
func checkPage(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	unnamed := eval[[]string](t, ctx, `[...document.querySelectorAll('input, select, textarea, button')].filter(e => e.offsetParent !== null && !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim()).map(e => e.outerHTML.slice(0, 80))
		.concat(document.querySelectorAll('#view h1').length === 1 ? [] : ['h1 count ' + document.querySelectorAll('#view h1').length])`)
	if len(unnamed) > 0 {
		t.Errorf("%s: controls without a name: %q", name, unnamed)
	}
	checkContrast(t, ctx, name)
}

const noValueInPage = `!document.documentElement.outerHTML.includes('` + secretValue + `')`

// TestBrowserKinds: the ConfigMaps, Secrets, ServiceAccounts and pod
// pages and the Service page's DNS names and Endpoints, as the admin and
// as the read-only session, in English and Chinese and on a phone. A
// Secret's value is in no page until the admin reveals it; the
// read-only session is told it may not read Secrets.
func TestBrowserKinds(t *testing.T) {
	chromiumPath(t)
	ts := servertest.Start(t, testOptions())
	fakeNode(t, ts.Client(), "node-a")
	kindsFixture(t, ts)
	ctx := newBrowser(t, spkiPin(t, ts.Bundle().ServerTLS))
	step(t, ctx, "open", chromedp.Navigate(ts.URL()+"/#/configmaps"))
	login(t, ctx, ts.Bundle().AdminToken)

	t.Run("configmaps", func(t *testing.T) {
		waitJS(t, ctx, "the app-config row", `document.querySelector('[data-configmap="default/app-config"]')`)
		if row := eval[string](t, ctx, `document.querySelector('[data-configmap="default/app-config"]').textContent`); !strings.Contains(row, "app-configdefault21") || !strings.Contains(row, "39 B") {
			t.Errorf("row %q", row)
		}
		checkPage(t, ctx, "configmaps")
		step(t, ctx, "open app-config", clickLive(`[data-configmap="default/app-config"] a`))
		waitJS(t, ctx, "its values", `document.querySelector('#cm-info pre.value') && document.querySelector('[data-binary="blob"]')`)
		vals := eval[string](t, ctx, `[...document.querySelectorAll('#cm-info pre.value')].map(p => p.textContent).join('|')`)
		if !strings.Contains(vals, "hello <b>world</b>") || !strings.Contains(vals, "color=blue\nsize=3") {
			t.Errorf("values %q", vals)
		}
		if b := eval[string](t, ctx, `document.querySelector('[data-binary="blob"]').textContent`); !strings.Contains(b, "3 B") {
			t.Errorf("binary row %q", b)
		}
		checkPage(t, ctx, "configmap")
		shot(t, ctx, "configmap")
	})

	t.Run("secrets as admin", func(t *testing.T) {
		goTo(t, ctx, "#/secrets")
		waitJS(t, ctx, "the db row", `document.querySelector('[data-secret="default/db"]')`)
		row := eval[string](t, ctx, `document.querySelector('[data-secret="default/db"]').textContent`)
		if !strings.Contains(row, "kubernetes.io/basic-auth") || !strings.Contains(row, "22 B") {
			t.Errorf("row %q", row)
		}
		if !eval[bool](t, ctx, noValueInPage) {
			t.Fatal("the value is in the list page")
		}
		checkPage(t, ctx, "secrets")
		step(t, ctx, "open db", clickLive(`[data-secret="default/db"] a`))
		waitJS(t, ctx, "the keys", `document.querySelector('[data-key="password"]') && document.getElementById('sec-reveal')`)
		if !eval[bool](t, ctx, noValueInPage) {
			t.Fatal("the value is in the page before reveal")
		}
		checkPage(t, ctx, "secret")
		shot(t, ctx, "secret-hidden")
		step(t, ctx, "reveal", chromedp.Click(chromedp.ID("sec-reveal")))
		waitJS(t, ctx, "the value", `(document.querySelector('pre[data-value="password"]') || {}).textContent === '`+secretValue+`'`)
		if u := eval[string](t, ctx, `document.querySelector('pre[data-value="username"]').textContent`); u != "admin" {
			t.Errorf("username %q", u)
		}
		checkContrast(t, ctx, "secret revealed")
		shot(t, ctx, "secret-revealed")
		step(t, ctx, "hide", chromedp.Click(chromedp.ID("sec-hide")))
		waitJS(t, ctx, "the values gone", noValueInPage)
	})

	t.Run("serviceaccounts", func(t *testing.T) {
		goTo(t, ctx, "#/serviceaccounts?ns=default")
		waitJS(t, ctx, "the builder row", `document.querySelector('[data-serviceaccount="default/builder"]')`)
		got := eval[[]string](t, ctx, `(() => { const r = document.querySelector('[data-serviceaccount="default/builder"]'); return [...r.querySelectorAll('a')].map(a => a.textContent + ' ' + a.getAttribute('href')).concat([r.querySelector('[data-automount]').dataset.automount]); })()`)
		if strings.Join(got, "|") != "db #/secrets/default/db|regcred #/secrets/default/regcred|false" {
			t.Errorf("builder: %q", got)
		}
		// Every namespace has its default ServiceAccount.
		if !eval[bool](t, ctx, `!!document.querySelector('[data-serviceaccount="default/default"]')`) {
			t.Error("no default ServiceAccount")
		}
		checkPage(t, ctx, "serviceaccounts")
		shot(t, ctx, "serviceaccounts")
	})

	t.Run("service DNS and Endpoints", func(t *testing.T) {
		goTo(t, ctx, "#/services/default/db")
		waitJS(t, ctx, "the DNS names and the Endpoints", `document.querySelector('[data-dns-endpoint="web-0.db.default.svc.cluster.local"]') && document.querySelector('#svc-endpoints tbody tr') && +document.querySelector('[data-endpoints-bytes]').dataset.endpointsBytes > 0`)
		names := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-dns-name]')].map(e => e.dataset.dnsName)`)
		if strings.Join(names, " ") != "db db.default db.default.svc db.default.svc.cluster.local" {
			t.Errorf("names %q", names)
		}
		var p api.Pod
		if err := ts.Client().Get(ctxT(t, 5*time.Second), resPods, "default", "web-0", &p); err != nil {
			t.Fatal(err)
		}
		if a := eval[string](t, ctx, `document.querySelector('[data-dns-name="db.default.svc.cluster.local"]').textContent`); !strings.Contains(a, p.Status.PodIP) {
			t.Errorf("the answer %q lacks %s", a, p.Status.PodIP)
		}
		if s := eval[string](t, ctx, `document.querySelector('[data-dns-srv]').dataset.dnsSrv`); s != "_http._tcp.db.default.svc.cluster.local" {
			t.Errorf("SRV %q", s)
		}
		if bytes := eval[string](t, ctx, `document.querySelector('[data-bytes]').textContent`); !strings.Contains(bytes, "Endpoints") || !strings.Contains(bytes, "in 1") {
			t.Errorf("the byte comparison %q", bytes)
		}
		checkPage(t, ctx, "service dns")
		shot(t, ctx, "service-dns")
	})

	t.Run("pod page", func(t *testing.T) {
		goTo(t, ctx, "#/pods?ns=default")
		waitJS(t, ctx, "web-0's link", `document.querySelector('#pod-table a[href="#/pods/default/web-0"]')`)
		step(t, ctx, "open web-0", clickLive(`#pod-table a[href="#/pods/default/web-0"]`))
		waitJS(t, ctx, "the port-forward commands", `document.querySelector('#pod-forward li[data-port="8080"]')`)
		cmds := eval[[]string](t, ctx, `[...document.querySelectorAll('#pod-forward code')].map(c => c.textContent)`)
		if strings.Join(cmds, "|") != "kubectl port-forward pod/web-0 8080:8080|skiff port-forward pod/web-0 8080:8080" {
			t.Errorf("commands %q (UDP 53 has none: port-forward is TCP)", cmds)
		}
		if opts := eval[string](t, ctx, `[...document.querySelectorAll('#term-container option')].map(o => o.value).join(',')`); opts != "web,sidecar" {
			t.Errorf("terminal containers %q", opts)
		}
		checkPage(t, ctx, "pod")
		shot(t, ctx, "pod")
	})

	t.Run("Chinese and phone", func(t *testing.T) {
		step(t, ctx, "switch to Chinese", chromedp.SetValue(chromedp.ID("lang"), "zh"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('lang').dispatchEvent(new Event('change'))`))
		for _, p := range []struct{ hash, h1 string }{
			{"#/configmaps", "ConfigMap"}, {"#/secrets", "Secret"}, {"#/serviceaccounts", "服务账号"},
			{"#/pods/default/web-0", "Pod default/web-0"}, {"#/secrets/default/db", "Secret default/db"},
		} {
			goTo(t, ctx, p.hash)
			waitJS(t, ctx, p.hash+" in Chinese", `document.querySelector('#view h1') && document.querySelector('#view h1').textContent === '`+p.h1+`'`)
		}
		goTo(t, ctx, "#/services/default/db")
		waitJS(t, ctx, "the DNS section in Chinese", `document.querySelector('#svc-dns table') && [...document.querySelectorAll('#view h2')].some(h => h.textContent === 'DNS 名称')`)
		checkContrast(t, ctx, "service in Chinese")
		shot(t, ctx, "service-dns-zh")
		step(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		for _, h := range []string{"#/configmaps", "#/configmaps/default/app-config", "#/secrets", "#/secrets/default/db", "#/serviceaccounts", "#/services/default/db", "#/pods/default/web-0"} {
			goTo(t, ctx, h)
			waitJS(t, ctx, h, `document.querySelector('#view h1') && location.hash === '`+h+`'`)
			if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 400 {
				wide := eval[[]string](t, ctx, `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 392 && !e.closest('.scroll')).map((e) => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 8)`)
				t.Errorf("%s is %d px wide on a 390 px phone: %q", h, w, wide)
			}
		}
		shot(t, ctx, "pod-phone-zh")
		step(t, ctx, "desktop", chromedp.EmulateReset(), chromedp.SetValue(chromedp.ID("lang"), "en"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('lang').dispatchEvent(new Event('change'))`))
	})

	t.Run("read-only session", func(t *testing.T) {
		step(t, ctx, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("token")))
		login(t, ctx, ts.Bundle().DashboardToken)
		goTo(t, ctx, "#/secrets")
		waitJS(t, ctx, "the refusal", `document.querySelector('[data-refused="secrets"]')`)
		if msg := eval[string](t, ctx, `document.querySelector('[data-refused="secrets"]').textContent`); !strings.Contains(msg, "Not allowed") {
			t.Errorf("message %q", msg)
		}
		checkPage(t, ctx, "secrets read-only")
		shot(t, ctx, "secrets-readonly")
		goTo(t, ctx, "#/secrets/default/db")
		waitJS(t, ctx, "the refusal on the Secret's page", `document.querySelector('#sec-info [data-refused="secrets"]') && !document.getElementById('sec-reveal')`)
		// What the reveal asks for is refused too.
		if code := eval[int](t, ctx, `fetch('/ui/proxy/api/v1/namespaces/default/secrets/db').then(r => r.status)`); code != http.StatusForbidden {
			t.Errorf("the reveal request as read-only: %d", code)
		}
		if !eval[bool](t, ctx, noValueInPage) {
			t.Fatal("the value is in a read-only page")
		}
		// The other pages are readable; the terminal is not offered.
		goTo(t, ctx, "#/configmaps/default/app-config")
		waitJS(t, ctx, "the ConfigMap", `document.querySelector('#cm-info pre.value')`)
		goTo(t, ctx, "#/pods/default/web-0")
		waitJS(t, ctx, "the disabled terminal button", `document.getElementById('term-open') && document.getElementById('term-open').disabled && document.querySelector('#pod-forward code')`)
	})
}

// TestBrowserTerminal: the pod page's terminal in Chromium, typed into by
// keyboard. The server has no pods/exec of its own here, so the
// dashboard's API is the real server (through a reverse proxy) except for
// pods/exec of web-0, which a test server speaking v5.channel.k8s.io
// answers (ws_test.go): the page's WebSocket goes through the dashboard's
// /ui/exec, which the test server sees with the session's token.
func TestBrowserTerminal(t *testing.T) {
	chromiumPath(t)
	ts := servertest.Start(t, testOptions())
	fakeNode(t, ts.Client(), "node-a")
	kindsFixture(t, ts)
	target, _ := url.Parse(ts.URL())
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ts.Bundle().CACertPEM)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	rp.FlushInterval = -1
	seen := make(chan execRequest, 8)
	apiMux := http.NewServeMux()
	apiMux.Handle("/", rp)
	apiMux.Handle("/api/v1/namespaces/default/pods/web-0/exec", testExecServer(t, ts.Bundle().AdminToken, seen))
	d, err := web.New(web.Config{
		API: apiMux,
		Authenticate: func(_ context.Context, tok string) (web.Identity, bool) {
			return web.Identity{Name: "admin"}, subtle.ConstantTimeCompare([]byte(tok), []byte(ts.Bundle().AdminToken)) == 1
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
	step(t, b, "open", chromedp.Navigate("https://"+ln.Addr().String()+"/#/pods/default/web-0"))
	login(t, b, ts.Bundle().AdminToken)
	waitJS(t, b, "the terminal form", `document.querySelectorAll('#term-container option').length === 2`)
	step(t, b, "pick the sidecar", chromedp.SetValue(chromedp.ID("term-container"), "sidecar"),
		chromedp.Click(chromedp.ID("term-open")))
	waitJS(t, b, "connected", `document.getElementById('term-status').textContent === 'Connected.' && document.getElementById('term-screen').textContent.startsWith('$ ')`)
	got := <-seen
	q, _ := url.ParseQuery(got.Query)
	if got.Auth != "Bearer "+ts.Bundle().AdminToken || got.Cookie != "" || q.Get("container") != "sidecar" || q.Get("command") != "sh" || q.Get("tty") != "true" || !strings.Contains(got.Protocol, "v5.channel.k8s.io") {
		t.Errorf("the exec server saw %+v", got)
	}
	if a := eval[string](t, b, `document.activeElement.id`); a != "term-screen" {
		t.Errorf("focus after connecting: %q", a)
	}
	screen := `document.getElementById('term-screen').textContent`
	// Typed on the screen, one key at a time; a typo erased with Backspace.
	step(t, b, "type size", chromedp.SendKeys(chromedp.ID("term-screen"), "sizx"+kb.Backspace+"e"+kb.Enter))
	waitJS(t, b, "the terminal's size", screen+`.match(/size (\d+)x(\d+)/) && +`+screen+`.match(/size (\d+)x(\d+)/)[1] >= 20`)
	step(t, b, "type err", chromedp.SendKeys(chromedp.ID("term-screen"), "err"+kb.Enter))
	waitJS(t, b, "stderr", screen+`.includes('oops')`)
	// A whole line from the input box.
	step(t, b, "send a line", chromedp.SendKeys(chromedp.ID("term-input"), "hello there"+kb.Enter))
	waitJS(t, b, "the echo", screen+`.includes('you said hello there')`)
	if s := eval[string](t, b, screen); !strings.Contains(s, "$ size\n") || strings.Contains(s, "\x1b") {
		t.Errorf("the screen %q", s)
	}
	checkPage(t, b, "terminal")
	shot(t, b, "pod-terminal")
	step(t, b, "exit 3", chromedp.SendKeys(chromedp.ID("term-screen"), "exit 3"+kb.Enter))
	waitJS(t, b, "the exit code", `document.getElementById('term-status').textContent === 'The command ended (exit code 3).'`)
	// The screen model: escape sequences (a title, colours, a charset,
	// erase-line), backspace, carriage return, a tab, and a character
	// split across two messages.
	model := eval[string](t, b, `(async () => {
		const m = await import('/ui/assets/terminal.js');
		const pre = document.createElement('pre');
		document.body.append(pre);
		const tm = new m.Terminal(pre, () => {});
		const e = new TextEncoder();
		tm.write(e.encode('\x1b]0;title\x07\x1b[1;32muser@pod\x1b[0m:~$ ls\r\nab\bc\x1b[Kdef\r\n12345\rxy\x1b[K\r\n\x1b(Bdone\ttab '));
		const zh = e.encode('中');
		tm.write(zh.subarray(0, 2));
		tm.write(zh.subarray(2));
		tm.close();
		pre.remove();
		const ok = m.exitOf('{"status":"Success"}').code === 0 && m.exitOf('{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"7"}]}}').code === 7;
		return tm.text() + (ok ? '' : ' (exitOf wrong)');
	})()`)
	if want := "user@pod:~$ ls\nacdef\nxy\ndone    tab 中"; model != want {
		t.Errorf("the screen model: %q, want %q", model, want)
	}
	// A handshake the API refuses: the page says it could not open.
	step(t, b, "a refused command", chromedp.SetValue(chromedp.ID("term-command"), "refuse"), chromedp.Click(chromedp.ID("term-open")))
	waitJS(t, b, "the refusal", `document.getElementById('term-status').className === 'error' && document.getElementById('term-status').textContent.startsWith('Could not open the terminal')`)
}
