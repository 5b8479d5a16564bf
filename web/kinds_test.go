package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/dns"
	"github.com/skiff-dev/skiff/dns/source"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server/servertest"
	"github.com/skiff-dev/skiff/web"
)

var (
	resSecrets = api.Lookup(resources, "v1", "secrets")
	resSlices  = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
)

const secretValue = "s3cr3t-VALUE-7f1c"

// TestSecretsSummariesAndReveal: /ui/secrets lists names, types and key
// sizes, never a value; the value comes only from the API itself
// (/ui/proxy, the page's reveal), for the admin session; the read-only
// session gets 403 with the API's message for both; and no value
// reaches the server's log, at debug level.
func TestSecretsSummariesAndReveal(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ts := servertest.Start(t, opts)
	ctx := ctxT(t, 20*time.Second)
	sec := &api.Secret{ObjectMeta: api.ObjectMeta{Name: "db"}, Type: "kubernetes.io/basic-auth",
		Data: map[string][]byte{"password": []byte(secretValue), "username": []byte("admin")}}
	if err := ts.Client().Create(ctx, resSecrets, "default", sec); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(secretValue))
	admin := newBrowserish(t, ts)
	admin.mustLogin(ts.Bundle().AdminToken)
	for _, path := range []string{"/ui/secrets", "/ui/secrets?namespace=default", "/ui/secrets?namespace=default&name=db"} {
		code, body, _ := admin.do(http.MethodGet, path, "", nil, nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if contains(body, secretValue) || contains(body, b64) || contains(body, "YWRtaW4=") {
			t.Fatalf("GET %s shows a value: %s", path, body)
		}
		for _, want := range []string{`"name":"db"`, `"type":"kubernetes.io/basic-auth"`, `{"name":"password","bytes":17}`, `{"name":"username","bytes":5}`} {
			if !contains(body, want) {
				t.Errorf("GET %s lacks %s: %s", path, want, body)
			}
		}
	}
	if code, _, _ := admin.do(http.MethodGet, "/ui/secrets?namespace=default&name=nope", "", nil, nil); code != http.StatusNotFound {
		t.Errorf("a missing secret: %d", code)
	}
	// The reveal: the API's own answer, with the session's token.
	code, body, hdr := admin.do(http.MethodGet, "/ui/proxy/api/v1/namespaces/default/secrets/db", "", nil, nil)
	if code != http.StatusOK || !contains(body, b64) || hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("reveal as admin: %d %q %s", code, hdr.Get("Cache-Control"), body)
	}

	ro := newBrowserish(t, ts)
	ro.mustLogin(ts.Bundle().DashboardToken)
	for _, path := range []string{"/ui/secrets", "/ui/secrets?namespace=default&name=db", "/ui/proxy/api/v1/namespaces/default/secrets/db"} {
		code, body, _ := ro.do(http.MethodGet, path, "", nil, nil)
		if code != http.StatusForbidden || !contains(body, "secrets") || contains(body, b64) {
			t.Errorf("GET %s read-only: %d %s", path, code, body)
		}
	}
	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	if strings.Contains(logs, secretValue) || strings.Contains(logs, b64) {
		t.Fatalf("a secret value in the server's log:\n%s", logs)
	}
}

// TestServiceInfoDNSNames: /ui/services/{ns}/{name} lists the names the
// cluster DNS answers, in the server's cluster domain: every name it
// lists, asked of Skiff's DNS (package dns, fed with the same Service and
// slices, as a pod asks: the search list first), answers exactly the
// addresses it shows; and the sizes of the Endpoints object and of the
// slices are the lengths of the JSON the API returns.
func TestServiceInfoDNSNames(t *testing.T) {
	opts := testOptions()
	opts.Config = func(c *config.Server) { c.ClusterDomain = "skiff.test" }
	ts := servertest.Start(t, opts)
	fakeNode(t, ts.Client(), "node-a")
	ctx := ctxT(t, 60*time.Second)
	c := ts.Client()
	// A headless Service "db" of two pods: db-0 names it as its subdomain,
	// db-x has no hostname (a dashed-address name).
	for _, p := range []*api.Pod{
		{ObjectMeta: api.ObjectMeta{Name: "db-0", Labels: map[string]string{"app": "db"}}, Spec: api.PodSpec{Hostname: "db-0", Subdomain: "db",
			Containers: []api.Container{{Name: "c", Image: "busybox:1.36", Ports: []api.ContainerPort{{Name: "pg", ContainerPort: 5432}}}}}},
		{ObjectMeta: api.ObjectMeta{Name: "db-x", Labels: map[string]string{"app": "db"}}, Spec: api.PodSpec{
			Containers: []api.Container{{Name: "c", Image: "busybox:1.36", Ports: []api.ContainerPort{{Name: "pg", ContainerPort: 5432}}}}}},
	} {
		if err := c.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	headless := &api.Service{ObjectMeta: api.ObjectMeta{Name: "db"}, Spec: api.ServiceSpec{ClusterIP: api.ClusterIPNone,
		Selector: map[string]string{"app": "db"}, Ports: []api.ServicePort{{Name: "pg", Port: 5432}}}}
	webSvc := service("web", 80)
	webSvc.Spec.Ports[0].Name = "http"
	for _, s := range []*api.Service{headless, webSvc} {
		if err := c.Create(ctx, resServices, "default", s); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowserish(t, ts)
	b.mustLogin(ts.Bundle().DashboardToken) // read-only may read all of it

	type info struct {
		Domain string `json:"domain"`
		DNS    struct {
			Kind      string   `json:"kind"`
			Exists    bool     `json:"exists"`
			Names     []string `json:"names"`
			Answers   []string `json:"answers"`
			Endpoints []struct {
				Name      string   `json:"name"`
				Addresses []string `json:"addresses"`
				Pod       string   `json:"pod"`
			} `json:"endpoints"`
			SRV []string `json:"srv"`
		} `json:"dns"`
		Endpoints      json.RawMessage `json:"endpoints"`
		EndpointsBytes int             `json:"endpointsBytes"`
		Slices         []struct {
			Name  string `json:"name"`
			Bytes int    `json:"bytes"`
		} `json:"slices"`
		SliceBytes int `json:"sliceBytes"`
	}
	get := func(name string) info {
		t.Helper()
		code, body, _ := b.do(http.MethodGet, "/ui/services/default/"+name, "", nil, nil)
		if code != http.StatusOK {
			t.Fatalf("GET /ui/services/default/%s: %d %s", name, code, body)
		}
		var in info
		if err := json.Unmarshal(body, &in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	var db info
	eventually(t, 30*time.Second, "two ready endpoints of db, and its Endpoints", func() (bool, error) {
		db = get("db")
		return len(db.DNS.Endpoints) == 2 && db.EndpointsBytes > 0 && strings.Count(string(db.Endpoints), `"ip"`) == 2, nil
	})
	if db.Domain != "skiff.test" || db.DNS.Kind != "Headless" || !db.DNS.Exists {
		t.Fatalf("db: %+v", db)
	}
	if want := []string{"db", "db.default", "db.default.svc", "db.default.svc.skiff.test"}; !slices.Equal(db.DNS.Names, want) {
		t.Errorf("names %q, want %q", db.DNS.Names, want)
	}
	var names []string
	for _, e := range db.DNS.Endpoints {
		names = append(names, e.Name)
	}
	var x api.Pod
	if err := c.Get(ctx, resPods, "default", "db-x", &x); err != nil {
		t.Fatal(err)
	}
	dashed := strings.ReplaceAll(x.Status.PodIP, ".", "-")
	if want := []string{dashed + ".db.default.svc.skiff.test", "db-0.db.default.svc.skiff.test"}; !slices.Equal(names, want) {
		t.Errorf("per-pod names %q, want %q", names, want)
	}
	if !slices.Equal(db.DNS.SRV, []string{"_pg._tcp.db.default.svc.skiff.test"}) {
		t.Errorf("SRV %q", db.DNS.SRV)
	}
	wb := get("web")
	var svc api.Service
	if err := c.Get(ctx, resServices, "default", "web", &svc); err != nil {
		t.Fatal(err)
	}
	if wb.DNS.Kind != "ClusterIP" || !slices.Equal(wb.DNS.Answers, []string{svc.Spec.ClusterIP}) || !slices.Equal(wb.DNS.SRV, []string{"_http._tcp.web.default.svc.skiff.test"}) {
		t.Errorf("web: %+v", wb.DNS)
	}

	// The same names, asked of Skiff's DNS.
	store := dns.NewStore()
	var sl api.EndpointSliceList
	if err := c.List(ctx, resSlices, "default", client.ListOptions{}, &sl); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"db", "web"} {
		var s api.Service
		if err := c.Get(ctx, resServices, "default", name, &s); err != nil {
			t.Fatal(err)
		}
		if err := store.UpsertService(source.ServiceFrom(&s)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range sl.Items {
		if es, ok := source.EndpointSliceFrom(&sl.Items[i]); ok {
			if err := store.UpsertEndpointSlice(es); err != nil {
				t.Fatal(err)
			}
		}
	}
	store.SetSynced(true)
	ask := startDNS(t, store, "skiff.test")
	search := []string{"default.svc.skiff.test", "svc.skiff.test", "skiff.test"}
	// resolve asks as a pod of namespace default does (ndots:5: the
	// search list first, then the name as it is).
	resolve := func(name string, qtype uint16) (int, []string) {
		var rcode int
		for _, q := range append(slices.Collect(func(yield func(string) bool) {
			for _, s := range search {
				if !yield(name + "." + s + ".") {
					return
				}
			}
		}), name+".") {
			r := ask(q, qtype)
			rcode = r.Rcode
			if r.Rcode != mdns.RcodeSuccess || len(r.Answer) == 0 {
				continue
			}
			var out []string
			for _, rr := range r.Answer {
				switch rr := rr.(type) {
				case *mdns.A:
					out = append(out, rr.A.String())
				case *mdns.SRV:
					out = append(out, rr.Target)
				}
			}
			slices.Sort(out)
			return r.Rcode, out
		}
		return rcode, nil
	}
	for _, in := range []info{db, wb} {
		for _, n := range in.DNS.Names {
			if rc, got := resolve(n, mdns.TypeA); rc != mdns.RcodeSuccess || !slices.Equal(got, in.DNS.Answers) {
				t.Errorf("%s: DNS answers %s %q, the page says %q", n, mdns.RcodeToString[rc], got, in.DNS.Answers)
			}
		}
		for _, e := range in.DNS.Endpoints {
			if rc, got := resolve(e.Name, mdns.TypeA); rc != mdns.RcodeSuccess || !slices.Equal(got, e.Addresses) {
				t.Errorf("%s: DNS answers %s %q, the page says %q", e.Name, mdns.RcodeToString[rc], got, e.Addresses)
			}
		}
		for _, s := range in.DNS.SRV {
			if rc, got := resolve(s, mdns.TypeSRV); rc != mdns.RcodeSuccess || len(got) == 0 {
				t.Errorf("%s: DNS answers %s %q", s, mdns.RcodeToString[rc], got)
			}
		}
	}
	// A name the page does not list does not exist.
	if rc, _ := resolve("10-0-0-99.db.default.svc.skiff.test", mdns.TypeA); rc != mdns.RcodeNameError {
		t.Errorf("an unlisted endpoint name: %s", mdns.RcodeToString[rc])
	}

	// The sizes: the JSON the API returns.
	var raw []byte
	if err := c.Do(ctx, http.MethodGet, "/api/v1/namespaces/default/endpoints/db", nil, &raw); err != nil {
		t.Fatal(err)
	}
	if n := len(bytes.TrimSpace(raw)); n != db.EndpointsBytes {
		t.Errorf("Endpoints %d bytes, the page says %d", n, db.EndpointsBytes)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := c.Do(ctx, http.MethodGet, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector="+url.QueryEscape(api.LabelServiceName+"=db"), nil, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, it := range list.Items {
		sum += len(it)
	}
	if sum == 0 || sum != db.SliceBytes || len(db.Slices) != len(list.Items) {
		t.Errorf("slices %d bytes in %d, the page says %d in %d", sum, len(list.Items), db.SliceBytes, len(db.Slices))
	}
	if code, _, _ := b.do(http.MethodGet, "/ui/services/default/nope", "", nil, nil); code != http.StatusNotFound {
		t.Errorf("a missing service: %d", code)
	}
}

// startDNS serves store on loopback UDP and returns a query function.
func startDNS(t *testing.T, store *dns.Store, domain string) func(name string, qtype uint16) *mdns.Msg {
	t.Helper()
	srv, err := dns.NewServer(dns.Config{Domain: domain, Upstreams: []string{}}, store)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, udp, tcp) }()
	t.Cleanup(func() { cancel(); <-done })
	return func(name string, qtype uint16) *mdns.Msg {
		q := new(mdns.Msg)
		q.SetQuestion(name, qtype)
		r, _, err := new(mdns.Client).Exchange(q, udp.LocalAddr().String())
		if err != nil {
			t.Fatalf("ask %s: %v", name, err)
		}
		return r
	}
}

// TestServiceDNSNamesRules: the names of the cases the live test does
// not reach: not-ready endpoints (absent, unless the Service publishes
// them), IPv6 dashes, an ExternalName, and a Service without an address.
func TestServiceDNSNamesRules(t *testing.T) {
	f := false
	tr := true
	ptr := func(s string) *string { return &s }
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "h"}, Spec: api.ServiceSpec{ClusterIP: api.ClusterIPNone}}
	slice := api.EndpointSlice{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "h-1", Labels: map[string]string{api.LabelServiceName: "h"}}, AddressType: "IPv6",
		Endpoints: []api.Endpoint{
			{Addresses: []string{"fd00::5"}, Conditions: api.EndpointConditions{Ready: &tr}},
			{Addresses: []string{"fd00::6"}, Hostname: ptr("Web-1"), Conditions: api.EndpointConditions{Ready: &f}},
		}}
	store := dns.NewStore()
	check := func(what string, svc *api.Service, slices []api.EndpointSlice, want []string, wantAnswers []string) {
		t.Helper()
		got := web.ServiceDNSNamesForTest(svc, slices, "cluster.local")
		if !equalStrings(got.Endpoints, want) || !equalStrings(got.Answers, wantAnswers) {
			t.Errorf("%s: endpoints %q answers %q, want %q %q", what, got.Endpoints, got.Answers, want, wantAnswers)
		}
		// Skiff's DNS agrees.
		_ = store.UpsertService(source.ServiceFrom(svc))
		for i := range slices {
			es, _ := source.EndpointSliceFrom(&slices[i])
			_ = store.UpsertEndpointSlice(es)
		}
	}
	check("one ready endpoint", svc, []api.EndpointSlice{slice}, []string{"fd00--5.h.ns.svc.cluster.local"}, []string{"fd00::5"})
	pub := *svc
	pub.Spec.PublishNotReadyAddresses = true
	check("publishNotReadyAddresses", &pub, []api.EndpointSlice{slice}, []string{"fd00--5.h.ns.svc.cluster.local", "web-1.h.ns.svc.cluster.local"}, []string{"fd00::5", "fd00::6"})
	store.SetSynced(true)
	ask := startDNS(t, store, "cluster.local")
	for name, want := range map[string]string{"fd00--5.h.ns.svc.cluster.local.": "fd00::5", "web-1.h.ns.svc.cluster.local.": "fd00::6"} {
		r := ask(name, mdns.TypeAAAA)
		if r.Rcode != mdns.RcodeSuccess || len(r.Answer) != 1 || r.Answer[0].(*mdns.AAAA).AAAA.String() != want {
			t.Errorf("%s: %v", name, r)
		}
	}
	ext := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "e"}, Spec: api.ServiceSpec{Type: "ExternalName", ExternalName: "Example.COM"}}
	check("ExternalName", ext, nil, nil, []string{"example.com."})
	noIP := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "n"}}
	if got := web.ServiceDNSNamesForTest(noIP, nil, "cluster.local"); got.Exists {
		t.Errorf("a Service without a ClusterIP exists in DNS: %+v", got)
	}
	empty := web.ServiceDNSNamesForTest(svc, nil, "cluster.local")
	if empty.Exists || len(empty.SRV) != 0 {
		t.Errorf("a headless Service without endpoints: %+v", empty)
	}
}

func equalStrings(a, b []string) bool { return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b)) }

// TestExecProxy: /ui/exec carries the session to the API's pods/exec as
// a WebSocket: the API sees the session's bearer token, no cookie and no
// Origin, the query of a terminal (command, container, stdin, stdout,
// tty), and the v5.channel.k8s.io subprotocol; the frames then pass both
// ways (stdin, stdout, stderr, resize, the error channel's exit code).
// Cross-site, cookie-less and read-only handshakes are refused, the API's
// own refusal reaches the browser as it is, and /ui/proxy takes no
// upgrade.
func TestExecProxy(t *testing.T) {
	seen := make(chan execRequest, 8)
	apiMux := http.NewServeMux()
	apiMux.Handle("/api/v1/namespaces/default/pods/p/exec", testExecServer(t, "admin-token", seen))
	d, err := web.New(web.Config{
		API: apiMux,
		Authenticate: func(_ context.Context, tok string) (web.Identity, bool) {
			switch tok {
			case "admin-token":
				return web.Identity{Name: "admin"}, true
			case "ro-token":
				return web.Identity{Name: "ro", ReadOnly: true}, true
			}
			return web.Identity{}, false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(d)
	t.Cleanup(srv.Close)
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsCfg.NextProtos = nil // HTTP/1.1: a WebSocket is an HTTP/1.1 upgrade
	cookieOf := func(tok string) string {
		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar, Transport: srv.Client().Transport}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/login", strings.NewReader(`{"token":"`+tok+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", srv.URL)
		resp, err := hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("login %s: %v %v", tok, err, resp)
		}
		resp.Body.Close()
		u, _ := url.Parse(srv.URL)
		var out []string
		for _, c := range jar.Cookies(u) {
			out = append(out, c.Name+"="+c.Value)
		}
		return strings.Join(out, "; ")
	}
	admin := cookieOf("admin-token")
	execURL := srv.URL + "/ui/exec/default/p?container=c&command=sh&command=-i"
	hdr := func(cookie, origin string) http.Header {
		h := http.Header{"Sec-Websocket-Protocol": {"v5.channel.k8s.io"}}
		if cookie != "" {
			h.Set("Cookie", cookie)
		}
		if origin != "" {
			h.Set("Origin", origin)
		}
		return h
	}

	ws, code, proto, err := wsDial(execURL, tlsCfg, hdr(admin, srv.URL))
	if err != nil || ws == nil {
		t.Fatalf("dial: %v (HTTP %d %s)", err, code, proto)
	}
	defer ws.c.Close()
	if proto != "v5.channel.k8s.io" {
		t.Errorf("subprotocol %q", proto)
	}
	got := <-seen
	q, _ := url.ParseQuery(got.Query)
	if got.Path != "/api/v1/namespaces/default/pods/p/exec" || got.Auth != "Bearer admin-token" || got.Cookie != "" || got.Origin != "" ||
		!slices.Equal(q["command"], []string{"sh", "-i"}) || q.Get("container") != "c" || q.Get("stdin") != "true" || q.Get("stdout") != "true" || q.Get("tty") != "true" {
		t.Errorf("the API saw %+v", got)
	}
	// read collects the output of each stream until cond holds.
	streams := map[byte]*strings.Builder{1: {}, 2: {}, 3: {}}
	read := func(what string, cond func() bool) {
		t.Helper()
		_ = ws.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for !cond() {
			op, p, err := ws.read()
			if err != nil {
				t.Fatalf("%s: %v (stdout %q)", what, err, streams[1])
			}
			if op == opClose {
				t.Fatalf("%s: closed (stdout %q)", what, streams[1])
			}
			if len(p) > 0 && streams[p[0]] != nil {
				streams[p[0]].Write(p[1:])
			}
		}
	}
	send := func(ch byte, s string) {
		if err := ws.write(opBinary, append([]byte{ch}, s...)); err != nil {
			t.Fatal(err)
		}
	}
	read("the prompt", func() bool { return strings.HasPrefix(streams[1].String(), "$ ") })
	send(4, `{"Width":100,"Height":30}`)
	send(0, "size\r")
	read("the size", func() bool { return strings.Contains(streams[1].String(), "size 100x30\r\n") })
	send(0, "err\r")
	read("stderr", func() bool { return streams[2].String() == "oops\r\n" })
	send(0, "exit 3\r")
	read("the exit status", func() bool { return streams[3].Len() > 0 })
	if !strings.Contains(streams[3].String(), `"reason":"ExitCode","message":"3"`) {
		t.Errorf("error channel %q", streams[3])
	}

	for _, c := range []struct {
		what           string
		cookie, origin string
		want           int
	}{
		{"no Origin", admin, "", http.StatusForbidden},
		{"another Origin", admin, "https://evil.example", http.StatusForbidden},
		{"no session", "", srv.URL, http.StatusUnauthorized},
		{"read-only", cookieOf("ro-token"), srv.URL, http.StatusForbidden},
	} {
		ws, code, body, err := wsDial(execURL, tlsCfg, hdr(c.cookie, c.origin))
		if err != nil || ws != nil || code != c.want {
			t.Errorf("%s: %v, HTTP %d %s; want %d", c.what, err, code, body, c.want)
		}
	}
	// The API's refusal reaches the browser as the API answered it.
	if ws, code, body, _ := wsDial(srv.URL+"/ui/exec/default/p?command=refuse", tlsCfg, hdr(admin, srv.URL)); ws != nil || code != http.StatusForbidden || !strings.Contains(body, `cannot create resource \"pods/exec\"`) {
		t.Errorf("a handshake the API refuses: HTTP %d %s", code, body)
	}
	if ws, code, body, _ := wsDial(srv.URL+"/ui/proxy/api/v1/namespaces/default/pods/p/exec?command=sh", tlsCfg, hdr(admin, srv.URL)); ws != nil || code != http.StatusBadRequest {
		t.Errorf("an upgrade through /ui/proxy: HTTP %d %s", code, body)
	}
}
