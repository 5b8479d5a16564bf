package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
	"github.com/skiff-dev/skiff/server/servertest"
)

// requireNode skips unless this test may build a node: root (network
// namespaces), the CNI plugins and iptables.
func requireNode(t testing.TB) {
	t.Helper()
	netnstest.RequireCNIPlugins(t)
	for _, b := range []string{"iptables", "iptables-save"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("needs %s (Debian: iptables)", b)
		}
	}
}

// realManifest is what the test applies from the dashboard's manifest
// box: three netexec backends, their Service, and a client pod. "skiff"
// is this test binary for the process runtime (see TestMain).
const realManifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: backend}
spec:
  replicas: 3
  selector:
    matchLabels: {app: backend}
  template:
    metadata:
      labels: {app: backend}
    spec:
      containers:
      - name: netexec
        image: skiff
        command: [skiff, netexec, --http-port=8080, --udp-port=-1]
        env:
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        ports: [{name: http, containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /healthz, port: http}
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata: {name: backend}
spec:
  selector: {app: backend}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, labels: {app: client}}
spec:
  containers:
  - name: netexec
    image: skiff
    command: [skiff, netexec, --http-port=8080, --udp-port=-1]
    env:
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    readinessProbe:
      httpGet: {path: /healthz, port: 8080}
      periodSeconds: 1
  - name: sidecar
    image: skiff
    command: [skiff, netexec, --http-port=8082, --udp-port=-1]
`

// TestBrowserRealTrace is the dashboard on a real node: `skiff server`
// with its built-in agent (process runtime, iptables mode) in a network
// namespace the test made. From the browser it applies three netexec
// backends, their Service and a client pod, opens the Service, picks the
// client pod and draws the packet path of the node's real trace: the DNS
// answer, VIP:port, the three KUBE-SVC rules with probabilities 1/3, 1/2
// and 1, and the three pods on the node. Then it reads the client's log
// from the pods page (the agent's log route). Needs root, the CNI
// plugins, iptables and chromium.
func TestBrowserRealTrace(t *testing.T) {
	chromiumPath(t)
	requireNode(t)
	for _, mode := range []string{"iptables", "nftables"} {
		t.Run(mode, func(t *testing.T) {
			if _, err := exec.LookPath("nft"); mode == "nftables" && err != nil {
				t.Skip("needs nft (Debian: nftables)")
			}
			realTrace(t, mode)
		})
	}
}

// realTrace is TestBrowserRealTrace in one proxy mode. In nftables mode
// the choice is one numgen map of three elements, 1/3 each.
func realTrace(t *testing.T, mode string) {
	node := netnstest.NewNode(t)
	ts := servertest.Start(t, servertest.Options{Agent: true, Config: func(cfg *config.Server) {
		cfg.AgentNetNS = node.Path
		cfg.AgentNodeName = "node-1"
		cfg.NodeIP = []string{"192.0.2.20"}
		cfg.Runtime = "process"
		cfg.ProxyMode = mode
		cfg.DNSUpstream = []string{"127.0.0.1:1"} // nothing outside the cluster is asked
	}})
	select {
	case <-ts.Server().Agent().Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("built-in agent not Ready")
	}
	var n api.Node
	ctx := ctxT(t, 3*time.Minute) // the API calls' bound
	if err := ts.Client().Get(ctx, resNodes, "", "node-1", &n); err != nil {
		t.Fatal(err)
	}
	podCIDR, err := netip.ParsePrefix(n.Spec.PodCIDR)
	if err != nil {
		t.Fatalf("node podCIDR %q: %v", n.Spec.PodCIDR, err)
	}
	t.Cleanup(func() { cleanupNode(t, ts, node, ts.DataDir(), podCIDR) })

	b := newBrowser(t, spkiPin(t, ts.Bundle().ServerTLS))
	base := ts.URL()
	step(t, b, "open", chromedp.Navigate(base+"/#/create"))
	login(t, b, ts.Bundle().AdminToken)

	// Apply the manifest from the page.
	waitJS(t, b, "the manifest box", `document.getElementById('manifest')`)
	man, _ := json.Marshal(realManifest)
	eval[chromedp.Void](t, b, `document.getElementById('manifest').value = `+string(man))
	step(t, b, "apply", chromedp.Click(chromedp.CSS("#apply-form button[type=submit]")))
	waitJS(t, b, "three created objects", `document.querySelectorAll('#apply-out li.okmsg').length === 3`)

	// The node runs them; the trace is complete once the rules are synced.
	var backends []string
	eventually(t, 60*time.Second, "3 backends and the client Ready", func() (bool, error) {
		var l api.PodList
		if err := ts.Client().List(ctx, resPods, "default", client.ListOptions{}, &l); err != nil {
			return false, err
		}
		backends = backends[:0]
		ready := 0
		for _, p := range l.Items {
			if api.IsPodReady(&p) {
				ready++
				if p.Labels["app"] == "backend" {
					backends = append(backends, p.Name)
				}
			}
		}
		return ready == 4 && len(backends) == 3, fmt.Errorf("%d of 4 Ready", ready)
	})
	slices.Sort(backends)
	var svc api.Service
	if err := ts.Client().Get(ctx, resServices, "default", "backend", &svc); err != nil {
		t.Fatal(err)
	}
	vip := svc.Spec.ClusterIP
	var tr api.Trace
	eventually(t, 30*time.Second, "a complete trace", func() (bool, error) {
		var raw []byte
		p := "/skiff/v1/namespaces/default/pods/client/trace?" + url.Values{"url": {"http://backend:80"}}.Encode()
		if err := ts.Client().Do(ctx, "GET", p, nil, &raw); err != nil {
			return false, err
		}
		tr = api.Trace{}
		if err := json.Unmarshal(raw, &tr); err != nil {
			return false, err
		}
		return len(tr.Endpoints) == 3 && len(tr.Warnings) == 0 && len(choices(&tr)) == 3, fmt.Errorf("%s", raw)
	})
	js, _ := json.MarshalIndent(tr, "", "  ")
	t.Logf("the trace:\n%s", js)

	// The service page: pick the client pod, draw the path.
	goTo(t, b, "#/services/default/backend")
	waitJS(t, b, "three backends and the client pod", `document.querySelectorAll('#svc-pods li').length === 3 && document.querySelector('#svc-info [data-endpoints]').dataset.endpoints === '3/3' && [...document.querySelectorAll('#trace-client option')].some(o => o.value === 'default/client')`)
	step(t, b, "pick the client pod", chromedp.SetValue(chromedp.ID("trace-client"), "default/client"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('trace-client').dispatchEvent(new Event('change'))`))
	if v := eval[string](t, b, `document.getElementById('trace-url').value`); v != "http://backend:80" {
		t.Fatalf("the URL field: %q", v)
	}
	// By keyboard: Enter on the focused Trace button.
	step(t, b, "trace", chromedp.Focus(chromedp.ID("trace-run")), chromedp.KeyEvent("\r"))
	waitJS(t, b, "the drawn path", `document.querySelector('#trace-out .path svg [data-step=pod]')`)

	type drawn struct {
		Client, DNS, DNSText, VIP, VIPText, Mode string
		Probs                                    []string
		Pods                                     []struct{ Pod, Node, Prob, Text string }
		Nodes                                    []string
		Words                                    string
	}
	got := eval[drawn](t, b, `(() => {
		const q = (s) => document.querySelector('#trace-out svg ' + s);
		const qa = (s) => [...document.querySelectorAll('#trace-out svg ' + s)];
		return {
			Client: q('[data-step=client]').dataset.pod,
			DNS: q('[data-step=dns]').dataset.answer || '', DNSText: q('[data-step=dns]').textContent,
			VIP: q('[data-step=vip]').dataset.vip || '', VIPText: q('[data-step=vip]').textContent,
			Mode: q('[data-step=rules]').dataset.mode || '',
			Probs: qa('[data-step=rules] text[data-prob]').map((e) => e.dataset.prob + ' ' + e.dataset.chain + ' ' + e.textContent),
			Pods: qa('[data-step=pod]').map((e) => ({Pod: e.dataset.pod, Node: e.dataset.node, Prob: e.dataset.prob, Text: e.textContent})),
			Nodes: qa('[data-step=node]').map((e) => e.dataset.name),
			Words: document.querySelector('#trace-out ol').textContent,
		};
	})()`)
	if got.Client != "client" {
		t.Errorf("client box: %q", got.Client)
	}
	if got.DNS != vip || !strings.Contains(got.DNSText, "backend.default.svc.cluster.local.") || !strings.Contains(got.DNSText, "→ "+vip) {
		t.Errorf("DNS answer: %q, %q; want %s", got.DNS, got.DNSText, vip)
	}
	if got.VIP != vip+":80" || !strings.Contains(got.VIPText, vip+":80/TCP") || !strings.Contains(got.VIPText, "default/backend") {
		t.Errorf("VIP: %q, %q", got.VIP, got.VIPText)
	}
	if got.Mode != mode {
		t.Errorf("rules mode %q", got.Mode)
	}
	var probs []float64
	for _, p := range got.Probs {
		var f float64
		fmt.Sscan(p, &f)
		probs = append(probs, f)
	}
	want := []struct {
		p    float64
		text string
	}{{1.0 / 3, "33.3% → 10.244."}, {0.5, "50% → 10.244."}, {1, "100% → 10.244."}}
	chain := " KUBE-SVC-"
	if mode == "nftables" {
		want[1].p, want[1].text, want[2].p, want[2].text = 1.0/3, want[0].text, 1.0/3, want[0].text
		chain = " "
	}
	if len(probs) != 3 {
		t.Errorf("rules drawn with a probability: %q, want three", got.Probs)
	} else {
		for i, w := range want {
			if math.Abs(probs[i]-w.p) > 0.001 || !strings.Contains(got.Probs[i], chain) || !strings.Contains(got.Probs[i], w.text) {
				t.Errorf("rule %d: %q, want probability %.3f drawn as %q", i+1, got.Probs[i], w.p, w.text)
			}
		}
	}
	var pods []string
	for _, p := range got.Pods {
		pods = append(pods, p.Pod)
		var f float64
		fmt.Sscan(p.Prob, &f)
		if p.Node != "node-1" || math.Abs(f-1.0/3) > 0.001 || !strings.Contains(p.Text, p.Pod) {
			t.Errorf("pod box %+v: want on node-1 with 1/3", p)
		}
	}
	slices.Sort(pods)
	if !slices.Equal(pods, backends) {
		t.Errorf("pods drawn %v, want the backends %v", pods, backends)
	}
	if !slices.Equal(got.Nodes, []string{"node-1"}) {
		t.Errorf("nodes drawn %v, want [node-1]", got.Nodes)
	}
	if !strings.Contains(got.Words, vip+":80") || strings.Count(got.Words, "33.3% of new connections") != 3 {
		t.Errorf("the path in words: %s", got.Words)
	}
	checkContrast(t, b, "service detail, real trace")
	suffix := ""
	if mode != "iptables" {
		suffix = "-" + mode
	}
	shot(t, b, "service-detail-real"+suffix)

	// The client's log, from the pods page (the agent's log route).
	goTo(t, b, "#/pods?ns=default")
	sel := `#pod-table button[data-logs="default/client"]`
	waitJS(t, b, "the client's row", `document.querySelector('`+sel+`')`)
	step(t, b, "logs", clickLive(sel)) // a live row: redrawn between a query and a click
	waitJS(t, b, "the client's log", `document.getElementById('logs-text').textContent.includes('started HTTP server')`)
	var apiLog []byte
	if err := ts.Client().Do(ctx, "GET", "/api/v1/namespaces/default/pods/client/log?container=netexec", nil, &apiLog); err != nil {
		t.Fatal(err)
	}
	if shown := eval[string](t, b, `document.getElementById('logs-text').textContent`); !strings.Contains(shown, "pod=client") || !strings.Contains(shown, ":8080") || !strings.HasPrefix(string(apiLog), shown) {
		t.Errorf("logs shown %q, the API's %q", shown, apiLog)
	}
	// The pod has two containers: the other one's log, picked by keyboard
	// (a select changes with the arrow keys).
	if eval[bool](t, b, `document.getElementById('logs-pick').hidden`) {
		t.Fatal("no container choice for a pod of two containers")
	}
	step(t, b, "pick the sidecar", chromedp.Focus(chromedp.ID("logs-container")), chromedp.KeyEvent(kb.ArrowDown))
	waitJS(t, b, "the sidecar's log", `document.getElementById('logs-container').value === 'sidecar' && document.getElementById('logs-text').textContent.includes(':8082')`)
	checkContrast(t, b, "pods with logs")
	shot(t, b, "pods-logs-real"+suffix)
}

// choices are a trace's rules that choose an endpoint with a
// probability (iptables: the KUBE-SVC rules; nftables: the numgen map's
// elements).
func choices(tr *api.Trace) []api.TraceRule {
	var out []api.TraceRule
	if tr.Rules == nil {
		return nil
	}
	for _, r := range tr.Rules.Entries {
		if r.Probability > 0 && r.Endpoint != "" {
			out = append(out, r)
		}
	}
	return out
}

// cleanupNode deletes the workloads through the API (the agent stops the
// processes and tears the pod networks down) and stops the server; then
// it stops by PID whatever pod process is left and removes any pod
// network left, as test/e2e does.
func cleanupNode(t *testing.T, ts *servertest.Server, node *netnstest.NS, dataDir string, podCIDR netip.Prefix) {
	ctx := context.Background()
	one := int64(1)
	opts := client.DeleteOptions{GracePeriodSeconds: &one}
	_ = ts.Client().Delete(ctx, resDeploys, "default", "backend", opts)
	var l api.PodList
	if err := ts.Client().List(ctx, resPods, "default", client.ListOptions{}, &l); err == nil {
		for _, p := range l.Items {
			_ = ts.Client().Delete(ctx, resPods, "default", p.Name, opts)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var l api.PodList
		if err := ts.Client().List(ctx, resPods, "", client.ListOptions{}, &l); err != nil || len(l.Items) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Stop()
	rt, err := process.New(process.Config{StateDir: filepath.Join(dataDir, "runtime", "process")})
	if err == nil {
		cs, _ := rt.List(ctx)
		for _, c := range cs {
			if c.State == runtime.StateRunning {
				t.Logf("pod process %s/%s (pid %d) still running at the end: stopped", c.PodUID, c.Name, c.Pid)
				_ = rt.Stop(ctx, c.ID, 0)
			}
			_ = rt.Remove(ctx, c.ID)
		}
	}
	nw, err := cni.New(cni.Config{DataDir: dataDir, PodCIDR: podCIDR, ServiceCIDR: netip.MustParsePrefix("10.96.0.0/16")})
	if err == nil {
		_ = node.Do(func() error {
			uids, _ := nw.Pods(ctx)
			for _, u := range uids {
				t.Logf("pod network %s still there at the end: removed", u)
				_ = nw.DelPod(ctx, u)
			}
			return nil
		})
	}
}
