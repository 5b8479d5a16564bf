package netagent_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/kubectl"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
)

// newTraceNode is a node with the real proxy in mode and the node API on
// loopback (the agent's own netns: the test's), as `skiff agent` with
// --node-api-listen.
func newTraceNode(t *testing.T, s *server.Server, name, mode string) *node {
	return newNodeWith(t, s, name, func(n *node) {
		n.cfg.ProxyMode = mode
		n.proxy = netagent.RunProxy
		n.cfg.NodeAPIListen = "127.0.0.1:0"
	})
}

// getTrace calls the server's trace endpoint as c.
func getTrace(ctx context.Context, c *client.Client, pod, target string) (*api.Trace, error) {
	var raw []byte
	p := "/skiff/v1/namespaces/default/pods/" + pod + "/trace?" + url.Values{"url": {target}}.Encode()
	if err := c.Do(ctx, "GET", p, nil, &raw); err != nil {
		return nil, err
	}
	var tr api.Trace
	if err := json.Unmarshal(raw, &tr); err != nil {
		return nil, fmt.Errorf("decode %s: %w", raw, err)
	}
	return &tr, nil
}

// TestTraceE2E: three backends and a client on one node, in iptables and
// nftables mode; the client reaches the Service by name, then the trace
// (asked from the server, answered by the node's agent over its node API)
// shows the search expansion, the Service, the rules with 1/3 each, the
// endpoints, and a conntrack entry of the client's connections.
func TestTraceE2E(t *testing.T) {
	requireNode(t)
	for _, mode := range []string{"iptables", "nftables"} {
		t.Run(mode, func(t *testing.T) {
			s := startServer(t)
			admin, err := s.Client()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			nodeName := "node-trace-" + mode
			n := newTraceNode(t, s, nodeName, mode)
			backends := []string{"b1", "b2", "b3"}
			for _, name := range append(slices.Clone(backends), "client") {
				p := netexecPod(name, "netexec", "--http-port=8080", "--udp-port=8081")
				if name != "client" {
					p.Labels["svc"] = "backend"
				}
				if err := admin.Create(ctx, resPods, "default", p); err != nil {
					t.Fatal(err)
				}
			}
			var podIPs []string
			for _, name := range backends {
				p := waitPod(t, admin, name, 30*time.Second, "Ready", podReady)
				podIPs = append(podIPs, p.Status.PodIP)
			}
			cl := waitPod(t, admin, "client", 30*time.Second, "Ready", podReady)
			clientIP := netip.MustParseAddr(cl.Status.PodIP)
			svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "backend", Namespace: "default"},
				Spec: api.ServiceSpec{Selector: map[string]string{"svc": "backend"},
					Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
			if err := admin.Create(ctx, resServices, "default", svc); err != nil {
				t.Fatal(err)
			}
			if err := admin.Get(ctx, resServices, "default", "backend", svc); err != nil {
				t.Fatal(err)
			}
			vip := svc.Spec.ClusterIP
			t.Cleanup(func() { deletePods(t, admin, append(backends, "client")...) })
			eventually(t, 30*time.Second, "the client reaches the three backends by name", func() (bool, error) {
				seen, err := n.dialTries(clientIP, "backend", 80, 15)
				if err != nil {
					return false, err
				}
				return slices.Equal(seen, backends), fmt.Errorf("answers %v", seen)
			})

			tr, err := getTrace(ctx, admin, "client", "http://backend")
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.MarshalIndent(tr, "", "  ")
			t.Logf("trace:\n%s", js)
			if tr.Kind != "Trace" || tr.APIVersion != "skiff.dev/v1" || tr.Pod.NodeName != nodeName || tr.Pod.IP != clientIP.String() {
				t.Errorf("header: %+v %+v", tr.TypeMeta, tr.Pod)
			}
			// 1. DNS: ndots 5, the first search domain answers.
			if tr.DNS == nil || tr.DNS.Ndots != 5 || len(tr.DNS.Queries) != 1 ||
				tr.DNS.Queries[0].Name != "backend.default.svc.cluster.local." || tr.DNS.Queries[0].Rcode != "NOERROR" || tr.DNS.Answer != vip {
				t.Errorf("dns: %+v", tr.DNS)
			}
			// 2. Service.
			if s := tr.Service; s == nil || s.Name != "backend" || s.IP != vip || s.Port != 80 || s.TargetPort != "8080" {
				t.Errorf("service: %+v", tr.Service)
			}
			// 3. Rules.
			if tr.Rules == nil || tr.Rules.Mode != mode || len(tr.Rules.Entries) == 0 {
				t.Fatalf("rules: %+v", tr.Rules)
			}
			if mode == "iptables" {
				var probs []float64
				for _, r := range tr.Rules.Entries {
					if strings.HasPrefix(r.Chain, "KUBE-SVC-") && r.Endpoint != "" {
						probs = append(probs, r.Probability)
					}
				}
				if len(probs) != 3 || probs[0] < 0.333 || probs[0] > 0.334 || probs[1] != 0.5 || probs[2] != 1 {
					t.Errorf("iptables probabilities %v, want 1/3, 1/2, 1", probs)
				}
			} else {
				numgen := 0
				for _, r := range tr.Rules.Entries {
					if strings.Contains(r.Text, "numgen random mod 3") {
						numgen++
					}
				}
				if numgen != 1 {
					t.Errorf("nftables: %d numgen rules, want 1", numgen)
				}
			}
			// 4. Endpoints: the three, ready, on the node, 1/3 each.
			var epIPs []string
			for _, e := range tr.Endpoints {
				epIPs = append(epIPs, e.IP)
				if !e.Ready || !e.Serving || e.Terminating || e.NodeName != nodeName || e.Port != 8080 ||
					!slices.Contains(backends, e.Pod) || e.Probability < 0.333 || e.Probability > 0.334 {
					t.Errorf("endpoint %+v", e)
				}
			}
			slices.Sort(epIPs)
			slices.Sort(podIPs)
			if !slices.Equal(epIPs, podIPs) {
				t.Errorf("endpoints %v, want the backends %v", epIPs, podIPs)
			}
			// 5. Conntrack: the client's connections, answered by backends.
			found := false
			for _, c := range tr.Conntrack {
				host, _, _ := strings.Cut(c.ReplySrc, ":")
				if strings.HasPrefix(c.Src, clientIP.String()+":") && c.Dst == vip+":80" && slices.Contains(podIPs, host) {
					found = true
				}
			}
			if !found {
				t.Errorf("no conntrack entry from the client to %s:80 answered by a backend: %+v", vip, tr.Conntrack)
			}
			if len(tr.Warnings) != 0 {
				t.Errorf("warnings: %q", tr.Warnings)
			}

			// A name with a dot still goes through the search list first
			// (ndots 5): backend.default.default.svc… fails, then
			// backend.default.svc… answers.
			tr2, err := getTrace(ctx, admin, "client", "backend.default:80")
			if err != nil {
				t.Fatal(err)
			}
			if d := tr2.DNS; d == nil || len(d.Queries) != 2 || d.Queries[0].Name != "backend.default.default.svc.cluster.local." ||
				d.Queries[0].Rcode != "NXDOMAIN" || d.Queries[1].Name != "backend.default.svc.cluster.local." || d.Answer != vip {
				t.Errorf("search expansion of backend.default: %+v", tr2.DNS)
			}

			// A port the Service does not have: a warning, no rules.
			tr3, err := getTrace(ctx, admin, "client", "http://"+vip+":81")
			if err != nil {
				t.Fatal(err)
			}
			if tr3.DNS != nil || tr3.Service != nil || len(tr3.Warnings) == 0 || !strings.Contains(strings.Join(tr3.Warnings, " "), "no TCP port 81") {
				t.Errorf("wrong port: service %+v warnings %q", tr3.Service, tr3.Warnings)
			}

			// An address outside the cluster: no Service, the egress
			// masquerade with its rules read back from the kernel (no
			// packet is sent: the trace reads, it does not dial).
			eventually(t, 20*time.Second, "the trace of an address outside the cluster", func() (bool, error) {
				tr, err := getTrace(ctx, admin, "client", "http://198.51.100.7:8080")
				if err != nil {
					return false, err
				}
				e := tr.Egress
				ok := tr.Service == nil && e != nil && e.Masquerade &&
					strings.Contains(strings.ToLower(strings.Join(e.Rules, "\n")), "masquerade") && len(tr.Warnings) == 1 // "no Service's address"
				return ok, fmt.Errorf("egress %+v warnings %q", e, tr.Warnings)
			})
			if out := runTraceCLI(t, s, "client", "http://198.51.100.7:8080"); !strings.Contains(out, "Leaving the cluster") || !strings.Contains(out, "masqueraded: the node rewrites the source") {
				t.Errorf("skiff trace to an outside address:\n%s", out)
			}

			// A Service whose selector matches no pod: the broken step is
			// named, and the rule that rejects the connection is shown.
			empty := &api.Service{ObjectMeta: api.ObjectMeta{Name: "empty", Namespace: "default"},
				Spec: api.ServiceSpec{Selector: map[string]string{"svc": "none"},
					Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
			if err := admin.Create(ctx, resServices, "default", empty); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "the trace of a Service without endpoints", func() (bool, error) {
				tr, err := getTrace(ctx, admin, "client", "http://empty")
				if err != nil {
					return false, err
				}
				warned := strings.Contains(strings.Join(tr.Warnings, "\n"), "Service default/empty has no endpoints")
				rejected := false
				if tr.Rules != nil {
					for _, r := range tr.Rules.Entries {
						rejected = rejected || (mode == "iptables" && strings.Contains(r.Text, "has no endpoints") && strings.Contains(r.Text, "REJECT")) ||
							(mode == "nftables" && r.Chain == "no-endpoint-services")
					}
				}
				return warned && rejected && len(tr.Endpoints) == 0, fmt.Errorf("warnings %q rules %+v", tr.Warnings, tr.Rules)
			})

			// The CLI, as a user runs it: the steps in words.
			out := runTraceCLI(t, s, "client", "http://backend")
			t.Logf("skiff trace client http://backend\n%s", out)
			for _, want := range []string{
				`"backend" has 0 dot(s), fewer than ndots 5: the search list is tried first`,
				"backend.default.svc.cluster.local.  A  NOERROR  " + vip,
				"=> " + vip,
				"2. Service default/backend (ClusterIP)",
				"3. Rules (" + mode,
				"probability 1/3",
				"33.3%",
				"5. Conntrack",
				"answered by ",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("skiff trace output lacks %q:\n%s", want, out)
				}
			}
			if mode == "iptables" && (!strings.Contains(out, "probability 1/2") || !strings.Contains(out, "probability 1,")) {
				t.Errorf("skiff trace: iptables output without 1/2 and 1:\n%s", out)
			}

			if mode == "iptables" { // once is enough for the access checks
				traceAuth(t, s, n)
			}
		})
	}
}

// traceAuth: the dashboard token may trace, a node may not; the node API
// refuses callers without the server's client certificate.
func traceAuth(t *testing.T, s *server.Server, n *node) {
	ctx := context.Background()
	dash, err := client.New(client.Config{Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().DashboardToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := getTrace(ctx, dash, "client", "http://backend"); err != nil {
		t.Errorf("dashboard token: %v", err)
	}
	if _, err := getTrace(ctx, n.agent.Client(), "client", "http://backend"); !client.IsForbidden(err) {
		t.Errorf("node token: %v, want Forbidden", err)
	}
	join, _ := client.New(client.Config{Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken})
	if _, err := getTrace(ctx, join, "client", "http://backend"); !client.IsForbidden(err) {
		t.Errorf("join token: %v, want Forbidden", err)
	}
	bad, _ := client.New(client.Config{Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: "nope"})
	if _, err := getTrace(ctx, bad, "client", "http://backend"); !client.IsUnauthorized(err) {
		t.Errorf("bad token: %v, want Unauthorized", err)
	}

	// The node API itself, as published on the Node.
	admin, _ := s.Client()
	var nd api.Node
	if err := admin.Get(ctx, resNodes, "", n.cfg.NodeName, &nd); err != nil {
		t.Fatal(err)
	}
	u := nd.Annotations[netagent.AnnotationNodeAPI]
	if !strings.HasPrefix(u, "https://127.0.0.1:") || nd.Annotations[netagent.AnnotationNodeAPICert] == "" ||
		nd.Status.DaemonEndpoints.KubeletEndpoint.Port == 0 {
		t.Fatalf("node API not published: %v %+v", nd.Annotations, nd.Status.DaemonEndpoints)
	}
	call := func(certs []tls.Certificate) error {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, Certificates: certs}}} // the pin is not what is tested here
		resp, err := c.Get(u + "/trace?namespace=default&pod=client&url=http://backend")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := call(nil); err == nil || strings.Contains(err.Error(), "status 200") {
		t.Errorf("no client certificate: %v, want a refused handshake", err)
	}
	// The right name, signed by another CA.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: netagent.NodeAPIClientName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	forged := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	if err := call([]tls.Certificate{forged}); err == nil || strings.Contains(err.Error(), "status 200") {
		t.Errorf("self-signed client certificate: %v, want a refused handshake", err)
	}
}

// TestPodLogsE2E: the server reads a pod's log from its node's agent over
// the node API: whole, tailLines, follow, an unknown container.
func TestPodLogsE2E(t *testing.T) {
	requireNode(t)
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	newTraceNode(t, s, "node-logs", "iptables")
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "printer", Namespace: "default"},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "sh", Image: "skiff", Command: []string{"/bin/sh", "-c",
			"echo line1; echo line2; echo line3; i=0; while true; do i=$((i+1)); echo tick$i; sleep 0.2; done"}}}}}
	if err := admin.Create(ctx, resPods, "default", p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePods(t, admin, "printer") })
	waitPod(t, admin, "printer", 30*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	logPath := "/api/v1/namespaces/default/pods/printer/log"

	var whole []byte
	eventually(t, 10*time.Second, "the log has the first lines", func() (bool, error) {
		whole = nil
		err := admin.Do(ctx, "GET", logPath, nil, &whole)
		return err == nil && strings.HasPrefix(string(whole), "line1\nline2\nline3\ntick1\n"), fmt.Errorf("%v: %q", err, whole)
	})
	var tail []byte
	if err := admin.Do(ctx, "GET", logPath+"?tailLines=1", nil, &tail); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(string(tail), "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "tick") {
		t.Errorf("tailLines=1: %q", tail)
	}
	var e error
	if e = admin.Do(ctx, "GET", logPath+"?container=nope", nil, nil); !client.IsBadRequest(e) {
		t.Errorf("unknown container: %v, want BadRequest", e)
	}

	// follow: the stream keeps growing.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.Bundle().CACertPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(fctx, "GET", s.URL()+logPath+"?follow=true&tailLines=2", nil)
	req.Header.Set("Authorization", "Bearer "+s.Bundle().AdminToken)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("follow: %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	var got []string
	for len(got) < 6 && sc.Scan() {
		got = append(got, sc.Text())
	}
	if len(got) < 6 {
		t.Fatalf("follow: %q then %v", got, sc.Err())
	}
	// The last 2 lines at the start, then every line as it comes, in order.
	seq := []string{"line1", "line2", "line3"}
	for i := 1; i < 1000; i++ {
		seq = append(seq, fmt.Sprintf("tick%d", i))
	}
	at := slices.Index(seq, got[0])
	if at < 0 || !slices.Equal(got, seq[at:at+len(got)]) {
		t.Errorf("follow: %q, want consecutive log lines (none lost or repeated)", got)
	}
}

// deletePods deletes the pods (grace 1s) and waits until they are gone, so
// that the node's cleanup finds no pod process or network left.
func deletePods(t *testing.T, c *client.Client, names ...string) {
	ctx := context.Background()
	one := int64(1)
	for _, name := range names {
		if err := c.Delete(ctx, resPods, "default", name, client.DeleteOptions{GracePeriodSeconds: &one}); err != nil && !client.IsNotFound(err) {
			t.Errorf("delete %s: %v", name, err)
		}
	}
	for _, name := range names {
		eventually(t, 30*time.Second, name+" deleted", func() (bool, error) {
			err := c.Get(ctx, resPods, "default", name, &api.Pod{})
			return client.IsNotFound(err), err
		})
	}
}

// TestServerBuiltinAgentLogsAndTrace: the built-in agent of `skiff server`
// answers logs and traces in-process (no node API listener).
func TestServerBuiltinAgentLogsAndTrace(t *testing.T) {
	requireNode(t)
	ns := netnstest.NewNode(t)
	s := servertest.Start(t, servertest.Options{Agent: true, Logger: testLog(t), Config: func(cfg *config.Server) {
		cfg.AgentNetNS = ns.Path
		cfg.AgentNodeName = "server-node"
		cfg.NodeIP = []string{"192.0.2.20"}
		cfg.Runtime = "process"
	}}).Server()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case <-s.Agent().Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("built-in agent not Ready")
	}
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "printer", Namespace: "default"},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "sh", Image: "skiff", Command: []string{"/bin/sh", "-c",
			"echo hello from the server node; exec sleep 600"}}}}}
	if err := admin.Create(ctx, resPods, "default", p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePods(t, admin, "printer") })
	waitPod(t, admin, "printer", 30*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	eventually(t, 10*time.Second, "the log", func() (bool, error) {
		var b []byte
		err := admin.Do(ctx, "GET", "/api/v1/namespaces/default/pods/printer/log", nil, &b)
		return err == nil && string(b) == "hello from the server node\n", fmt.Errorf("%v: %q", err, b)
	})
	var kube api.Service
	if err := admin.Get(ctx, resServices, "default", "kubernetes", &kube); err != nil {
		t.Fatal(err)
	}
	tr, err := getTrace(ctx, admin, "printer", "https://kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Pod.NodeName != "server-node" || tr.DNS == nil || tr.DNS.Answer != kube.Spec.ClusterIP ||
		tr.Service == nil || tr.Service.Name != "kubernetes" || tr.Service.Port != 443 {
		js, _ := json.MarshalIndent(tr, "", "  ")
		t.Errorf("trace of https://kubernetes:\n%s", js)
	}
}

// runTraceCLI runs `skiff trace POD URL` with the server's admin
// kubeconfig and returns what it printed.
func runTraceCLI(t *testing.T, s *server.Server, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	env := kubectl.Env{Out: &out, ErrOut: &errOut, Getenv: func(k string) string {
		if k == "KUBECONFIG" {
			return s.Bundle().KubeconfigPath
		}
		return ""
	}}
	for _, cmd := range kubectl.Commands(env) {
		if cmd.Name() != "trace" {
			continue
		}
		cmd.SetArgs(args)
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("skiff trace %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	t.Fatal("no trace command")
	return ""
}
