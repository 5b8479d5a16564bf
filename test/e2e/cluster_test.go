package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/kubectl"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
	"github.com/skiff-dev/skiff/netexec"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resources   = api.Resources()
	resPods     = api.Lookup(resources, "v1", "pods")
	resNodes    = api.Lookup(resources, "v1", "nodes")
	resServices = api.Lookup(resources, "v1", "services")
	resSlices   = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
	resDeploys  = api.Lookup(resources, "apps/v1", "deployments")
)

const (
	nodeName = "e2e-node"
	nodeIP   = "192.0.2.10" // the node's address on the veth to ext
	extIP    = "192.0.2.100"
	// lbPool is --lb-cidr; ext routes it to the node, as a router does
	// for MetalLB-style layer-3 load balancer addresses.
	lbPool = "198.51.100.0/29"
)

// requireRoot skips unless namespaces, the CNI plugins and the rule tools
// the proxy modes need are all there.
func requireRoot(t testing.TB) {
	t.Helper()
	netnstest.RequireCNIPlugins(t)
	for _, b := range []string{"iptables", "iptables-save", "nft"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("needs %s (Debian: iptables, nftables)", b)
		}
	}
}

// cluster is one `skiff server` with its built-in agent in a node
// namespace, and an outside namespace joined to the node by a veth.
type cluster struct {
	// t is the running (sub)test the helpers fail; see run.
	t       testing.TB
	mode    string
	s       *servertest.Server
	admin   *client.Client
	node    *netnstest.NS
	ext     *netnstest.NS
	dataDir string
	gateway netip.Addr // the node DNS: the pod bridge's gateway
	// beforeStop and afterStop, when set, run in cleanup once the
	// workloads are gone and before the server stops, and after it
	// stopped (the containerd runtime's leftovers: containerd_test.go).
	beforeStop, afterStop func()
	// clientIP is the client pod's IP once known (dial reads it from
	// load goroutines, which must not call t.Fatal).
	clientIP atomic.Value
}

// run runs a subtest whose failures the cluster's helpers report to it
// (subtests run one at a time).
func (c *cluster) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		prev := c.t
		c.t = t
		defer func() { c.t = prev }()
		f(t)
	})
}

// newCluster starts a cluster in proxy mode mode; opts change the server's
// configuration before it starts (e.g. the runtime).
func newCluster(t testing.TB, mode string, opts ...func(*config.Server)) *cluster {
	t.Helper()
	return newClusterLog(t, mode, testLog(), opts...)
}

// newClusterLog is newCluster with the server's (and its agent's) logger.
func newClusterLog(t testing.TB, mode string, log *slog.Logger, opts ...func(*config.Server)) *cluster {
	t.Helper()
	requireRoot(t)
	c := &cluster{t: t, mode: mode, node: netnstest.NewNode(t), ext: netnstest.New(t, "ext"), dataDir: t.TempDir()}
	netnstest.Connect(t,
		netnstest.End{NS: c.node, Name: "eth0", Addr: netip.MustParsePrefix(nodeIP + "/24")},
		netnstest.End{NS: c.ext, Name: "eth0", Addr: netip.MustParsePrefix(extIP + "/24")})
	h := c.ext.Netlink(t)
	if err := h.RouteAdd(&netlink.Route{Dst: netnstest.IPNet(netip.MustParsePrefix(lbPool)), Gw: net.ParseIP(nodeIP)}); err != nil {
		t.Fatalf("ext: route %s via %s: %v", lbPool, nodeIP, err)
	}
	s := servertest.Start(t, servertest.Options{
		DataDir: c.dataDir, Agent: true, LBCIDR: lbPool, Logger: log,
		Config: func(cfg *config.Server) {
			cfg.AgentNetNS = c.node.Path
			cfg.AgentNodeName = nodeName
			cfg.NodeIP = []string{nodeIP}
			cfg.Runtime = "process"
			cfg.ProxyMode = mode
			cfg.DNSUpstream = []string{"127.0.0.1:1"} // nothing outside the cluster is asked
			for _, o := range opts {
				o(cfg)
			}
		},
	})
	c.s, c.admin, c.dataDir = s, s.Client(), s.DataDir()
	t.Cleanup(c.cleanup)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case <-s.Server().Agent().Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("built-in agent not Ready")
	}
	var n api.Node
	if err := c.admin.Get(ctx, resNodes, "", nodeName, &n); err != nil {
		t.Fatal(err)
	}
	cidr, err := netip.ParsePrefix(n.Spec.PodCIDR)
	if err != nil {
		t.Fatalf("node podCIDR %q: %v", n.Spec.PodCIDR, err)
	}
	c.gateway = cidr.Addr().Next()
	return c
}

// testLog logs to stderr with SKIFF_TEST_LOG set (=debug: debug level
// too), else nowhere.
func testLog() *slog.Logger {
	switch os.Getenv("SKIFF_TEST_LOG") {
	case "":
		return slog.New(slog.DiscardHandler)
	case "debug":
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// cleanup deletes every workload through the API (the agent stops the
// processes and tears the pod networks down), stops the server, then
// kills by PID and removes whatever is left.
func (c *cluster) cleanup() {
	ctx := context.Background()
	if c.s == nil {
		return
	}
	defer func() { c.s = nil }()
	_, _ = c.cli("delete", "deployments,statefulsets,pods", "--all", "-A", "--grace-period=1")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var l api.PodList
		if err := c.admin.List(ctx, resPods, "", client.ListOptions{}, &l); err != nil || len(l.Items) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c.beforeStop != nil {
		c.beforeStop()
	}
	c.s.Stop()
	if c.afterStop != nil {
		c.afterStop()
	}
	rt, err := process.New(process.Config{StateDir: filepath.Join(c.dataDir, "runtime", "process")})
	if err == nil {
		cs, _ := rt.List(ctx)
		for _, ct := range cs {
			if ct.State == runtime.StateRunning {
				c.t.Logf("pod process %s/%s (pid %d) still running at the end: killed", ct.PodUID, ct.Name, ct.Pid)
				_ = rt.Stop(ctx, ct.ID, 0)
			}
			_ = rt.Remove(ctx, ct.ID)
		}
	}
	nw, err := cni.New(cni.Config{DataDir: c.dataDir, PodCIDR: netip.PrefixFrom(c.gateway.Prev(), 24),
		ServiceCIDR: netip.MustParsePrefix("10.96.0.0/16")})
	if err == nil && c.gateway.IsValid() {
		_ = c.node.Do(func() error {
			uids, _ := nw.Pods(ctx)
			for _, u := range uids {
				c.t.Logf("pod network %s still there at the end: removed", u)
				_ = nw.DelPod(ctx, u)
			}
			return nil
		})
	}
}

// cli runs the skiff CLI in-process against the cluster (its admin
// kubeconfig) and returns what it printed.
func (c *cluster) cli(args ...string) (string, error) {
	var out bytes.Buffer
	kc := filepath.Join(c.dataDir, "admin.kubeconfig")
	env := kubectl.Env{In: strings.NewReader(""), Out: &out, ErrOut: &out,
		Getenv: func(k string) string {
			if k == "KUBECONFIG" {
				return kc
			}
			return ""
		}}
	root := cli.NewRootWith(cli.Runners{}, env)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		return out.String(), fmt.Errorf("skiff %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

func (c *cluster) mustCLI(args ...string) string {
	c.t.Helper()
	out, err := c.cli(args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// httpIn is an HTTP client whose connections start in ns.
func httpIn(ns *netnstest.NS, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (conn net.Conn, err error) {
			err = ns.Do(func() error {
				var d net.Dialer
				conn, err = d.DialContext(ctx, network, addr)
				return err
			})
			return conn, err
		},
	}}
}

// get fetches a URL from inside ns; any status but 200 is an error.
func get(hc *http.Client, rawURL string) (string, error) {
	resp, err := hc.Get(rawURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("GET %s: %d %s", rawURL, resp.StatusCode, b)
	}
	return string(b), nil
}

// dial has the client pod make tries requests for /hostname to host:port
// (its /dial: each a new connection, names resolved through the pod's
// resolv.conf). It returns every answer and every failed try.
func (c *cluster) dial(host string, port, tries int) (answers, errs []string, err error) {
	ip, _ := c.clientIP.Load().(string)
	if ip == "" {
		ip = c.podIP("default", "client")
		c.clientIP.Store(ip)
	}
	q := url.Values{"host": {host}, "port": {fmt.Sprint(port)}, "request": {"hostname"}, "protocol": {"http"}, "tries": {fmt.Sprint(tries)}}
	body, err := get(httpIn(c.node, 30*time.Second), fmt.Sprintf("http://%s/dial?%s", net.JoinHostPort(ip, "8080"), q.Encode()))
	if err != nil {
		return nil, nil, err
	}
	var r netexec.DialResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return nil, nil, fmt.Errorf("dial answer %q: %w", body, err)
	}
	return r.Responses, r.Errors, nil
}

// spread is the distinct answers of tries successful requests; a failed
// try is an error.
func (c *cluster) spread(host string, port, tries int) ([]string, error) {
	answers, errs, err := c.dial(host, port, tries)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%d of %d requests to %s:%d failed: %v", len(errs), tries, host, port, errs[0])
	}
	seen := slices.Clone(answers)
	slices.Sort(seen)
	return slices.Compact(seen), nil
}

func (c *cluster) pod(ns, name string) *api.Pod {
	c.t.Helper()
	var p api.Pod
	if err := c.admin.Get(context.Background(), resPods, ns, name, &p); err != nil {
		c.t.Fatal(err)
	}
	return &p
}

func (c *cluster) podIP(ns, name string) string { return c.pod(ns, name).Status.PodIP }

// pods lists the pods of ns matching selector, sorted by name.
func (c *cluster) pods(ns, selector string) []api.Pod {
	c.t.Helper()
	var l api.PodList
	if err := c.admin.List(context.Background(), resPods, ns, client.ListOptions{LabelSelector: selector}, &l); err != nil {
		c.t.Fatal(err)
	}
	slices.SortFunc(l.Items, func(a, b api.Pod) int { return strings.Compare(a.Name, b.Name) })
	return l.Items
}

// readyPodNames are the names of the pods matching selector that are
// Ready and not being deleted.
func (c *cluster) readyPodNames(ns, selector string) []string {
	var names []string
	for _, p := range c.pods(ns, selector) {
		if p.DeletionTimestamp == nil && api.IsPodReady(&p) {
			names = append(names, p.Name)
		}
	}
	return names
}

// sliceEndpoints are the addresses of svc's EndpointSlices by readiness.
func (c *cluster) sliceEndpoints(ns, svc string) (ready, notReady []string, slices int) {
	c.t.Helper()
	var l api.EndpointSliceList
	if err := c.admin.List(context.Background(), resSlices, ns, client.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc}, &l); err != nil {
		c.t.Fatal(err)
	}
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready = append(ready, e.Addresses...)
			} else {
				notReady = append(notReady, e.Addresses...)
			}
		}
	}
	sortStrings(ready)
	sortStrings(notReady)
	return ready, notReady, len(l.Items)
}

func sortStrings(s []string) { slices.Sort(s) }

// rules dumps the proxy's rules in the node namespace: the nat table in
// iptables mode, the skiff table in nftables mode.
func (c *cluster) rules() string {
	c.t.Helper()
	var out []byte
	err := c.node.Do(func() error {
		var err error
		if c.mode == "iptables" {
			out, err = exec.Command("iptables-save", "-t", "nat").Output()
		} else {
			out, err = exec.Command("nft", "list", "table", "ip", "skiff").Output()
		}
		return err
	})
	if err != nil {
		c.t.Fatalf("dumping the %s rules: %v", c.mode, err)
	}
	return string(out)
}

var (
	iptEndpointRE = regexp.MustCompile(`-> ([0-9.]+):[0-9]+"`)
	nftPickRE     = regexp.MustCompile(`numgen random mod (\d+) offset (\d+) map @(\S+)`)
	nftElementRE  = regexp.MustCompile(`0x([0-9a-f]+) : ([0-9.]+) \. [0-9]+`)
)

// ruleEndpoints is how many endpoints the kernel rules spread ns/svc's
// port over (0: no rules for it).
func (c *cluster) ruleEndpoints(ns, svc, port string) int {
	return len(c.ruleEndpointIPs(ns, svc, port))
}

// ruleEndpointIPs are the endpoint addresses the kernel rules send ns/svc's
// port to, sorted.
func (c *cluster) ruleEndpointIPs(ns, svc, port string) []string {
	dump := c.rules()
	var ips []string
	if c.mode == "iptables" {
		// One "-A KUBE-SVC-... --comment "ns/svc:port -> ep"" jump per endpoint.
		for _, l := range strings.Split(dump, "\n") {
			if strings.HasPrefix(l, "-A KUBE-SVC-") && strings.Contains(l, fmt.Sprintf(`--comment "%s/%s:%s -> `, ns, svc, port)) {
				if m := iptEndpointRE.FindStringSubmatch(l); m != nil {
					ips = append(ips, m[1])
				}
			}
		}
		slices.Sort(ips)
		return ips
	}
	// The Service port's chain picks key offset+(numgen random mod N) in a
	// shared endpoint map: its endpoints are those N elements.
	lines := strings.Split(dump, "\n")
	var mod, off int64
	var mapName string
	for i, l := range lines {
		if !strings.Contains(l, "chain service-") || !strings.Contains(l, fmt.Sprintf("-%s/%s/tcp/%s ", ns, svc, port)) {
			continue
		}
		for _, b := range lines[i+1:] {
			if strings.TrimSpace(b) == "}" {
				break
			}
			if m := nftPickRE.FindStringSubmatch(b); m != nil {
				mod, _ = strconv.ParseInt(m[1], 10, 64)
				off, _ = strconv.ParseInt(m[2], 10, 64)
				mapName = m[3]
			}
		}
	}
	if mapName == "" {
		return nil
	}
	i := strings.Index(dump, "map "+mapName+" {")
	if i < 0 {
		return nil
	}
	block := dump[i:]
	if j := strings.Index(block, "\n\t}"); j >= 0 {
		block = block[:j]
	}
	for _, m := range nftElementRE.FindAllStringSubmatch(block, -1) {
		k, _ := strconv.ParseInt(m[1], 16, 64)
		if k >= off && k < off+mod {
			ips = append(ips, m[2])
		}
	}
	slices.Sort(ips)
	return ips
}

// lookup asks the node DNS (on the bridge gateway, from the node
// namespace) for name and type.
func (c *cluster) lookup(name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	var r *dns.Msg
	err := c.node.Do(func() error {
		var err error
		dc := &dns.Client{Timeout: 2 * time.Second}
		r, _, err = dc.Exchange(m, net.JoinHostPort(c.gateway.String(), "53"))
		return err
	})
	return r, err
}

// aRecords are the sorted A answers for name (nil for NXDOMAIN).
func (c *cluster) aRecords(name string) ([]string, int, error) {
	r, err := c.lookup(name, dns.TypeA)
	if err != nil {
		return nil, 0, err
	}
	var ips []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ips = append(ips, a.A.String())
		}
	}
	slices.Sort(ips)
	return ips, r.Rcode, nil
}

// eventually polls cond every 50 ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not true after %v (last: %v)", what, d, last)
}

// examplesDir is the repository's examples/.
func examplesDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
