package web_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestBrowserRealTerminal is the pod terminal end to end: `skiff server`
// with its built-in agent (process runtime) in a network namespace the
// test made, a pod on it, and the pod page's terminal in Chromium
// through the dashboard's /ui/exec to the API's pods/exec (a WebSocket of
// v5.channel.k8s.io) and the node: it types a shell command and reads its
// output, then exits with a code. Needs root, the CNI plugins, iptables
// and chromium; skipped, saying so, while the server answers 404 for
// pods/exec (a server without exec).
func TestBrowserRealTerminal(t *testing.T) {
	chromiumPath(t)
	requireNode(t)
	node := netnstest.NewNode(t)
	ts := servertest.Start(t, servertest.Options{Agent: true, Config: func(cfg *config.Server) {
		cfg.AgentNetNS = node.Path
		cfg.AgentNodeName = "node-1"
		cfg.NodeIP = []string{"192.0.2.20"}
		cfg.Runtime = "process"
		cfg.ProxyMode = "iptables"
		cfg.DNSUpstream = []string{"127.0.0.1:1"}
	}})
	select {
	case <-ts.Server().Agent().Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("built-in agent not Ready")
	}
	ctx := ctxT(t, 3*time.Minute)
	var n api.Node
	if err := ts.Client().Get(ctx, resNodes, "", "node-1", &n); err != nil {
		t.Fatal(err)
	}
	podCIDR, err := netip.ParsePrefix(n.Spec.PodCIDR)
	if err != nil {
		t.Fatalf("node podCIDR %q: %v", n.Spec.PodCIDR, err)
	}
	t.Cleanup(func() { cleanupNode(t, ts, node, ts.DataDir(), podCIDR) })
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "client", Labels: map[string]string{"app": "client"}}, Spec: api.PodSpec{
		Containers: []api.Container{{Name: "netexec", Image: "skiff", Command: []string{"skiff", "netexec", "--http-port=8080", "--udp-port=-1"},
			Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
	if err := ts.Client().Create(ctx, resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the pod Ready", func() (bool, error) {
		var p api.Pod
		if err := ts.Client().Get(ctx, resPods, "default", "client", &p); err != nil {
			return false, err
		}
		return api.IsPodReady(&p), fmt.Errorf("phase %s", p.Status.Phase)
	})
	// A server without pods/exec answers 404 for it (not being a
	// WebSocket, this request gets some other refusal where exec exists).
	var raw []byte
	if err := ts.Client().Do(ctx, "GET", "/api/v1/namespaces/default/pods/client/exec?command=true&stdout=true", nil, &raw); client.IsNotFound(err) {
		t.Skipf("this server answers 404 for pods/exec (%v): the terminal's end-to-end case needs a server with exec", err)
	}

	b := newBrowser(t, spkiPin(t, ts.Bundle().ServerTLS))
	step(t, b, "open", chromedp.Navigate(ts.URL()+"/#/pods/default/client"))
	login(t, b, ts.Bundle().AdminToken)
	waitJS(t, b, "the terminal form", `document.querySelector('#term-container option')`)
	if cmds := eval[string](t, b, `[...document.querySelectorAll('#pod-forward code')].map(c => c.textContent).join('|')`); cmds != "kubectl port-forward pod/client 8080:8080|skiff port-forward pod/client 8080:8080" {
		t.Errorf("port-forward commands %q", cmds)
	}
	step(t, b, "open the terminal", chromedp.Click(chromedp.ID("term-open")))
	waitJS(t, b, "connected", `document.getElementById('term-status').textContent === 'Connected.'`)
	screen := `document.getElementById('term-screen').textContent`
	step(t, b, "type a command", chromedp.SendKeys(chromedp.ID("term-screen"), "echo skiff-$((6*7)) $(stty size)"+kb.Enter))
	waitJS(t, b, "its output", screen+`.includes('skiff-42')`)
	// The shell saw the size the page sent (rows cols), not stty's 0 0.
	if s := eval[string](t, b, screen); strings.Contains(s, "skiff-42 0 0") {
		t.Errorf("the terminal size never reached the pod: %q", s)
	}
	shot(t, b, "pod-terminal-real")
	step(t, b, "exit 3", chromedp.SendKeys(chromedp.ID("term-screen"), "exit 3"+kb.Enter))
	waitJS(t, b, "the exit code", `document.getElementById('term-status').textContent === 'The command ended (exit code 3).'`)
}
