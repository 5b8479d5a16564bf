package ipvs_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs/ipvstest"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestDeviceAndRulesInNetNS runs the parts of the mode that need no ip_vs
// against the real kernel, in namespaces the test creates (proxytest's
// simulated node): the address interface (a bridge with no ports, kept
// down) and the iptables rules (REJECT, the masquerade chains). The IPVS
// handle is the fake, so a packet for a virtual IP is delivered to a local
// socket instead of being balanced: that is what proves the address is
// local on the node, from the node itself, from a pod and from outside.
func TestDeviceAndRulesInNetNS(t *testing.T) {
	netnstest.RequireRoot(t)
	if _, err := exec("iptables-restore"); err != nil {
		t.Skip("needs the iptables tools: " + err.Error())
	}
	before := proxytest.HostRules(t)
	t.Cleanup(func() {
		if after := proxytest.HostRules(t); after != before {
			t.Errorf("the machine's own iptables changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
	node := proxytest.NewNode(t)
	pod := node.AddPod("pod0", netip.MustParseAddr("10.244.0.2"))
	ctx := context.Background()
	ex := iptables.OSExec{NetNS: node.Path}
	mode, err := iptables.Detect(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := ipvs.NewDeviceAddrs(node.Path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer addrs.Close()
	fake := ipvstest.New()
	b, err := ipvs.New(ctx, ipvs.Config{IPVS: fake, Addrs: addrs, Exec: ex, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	web := svcPort("ns", "web", "10.96.0.10", func(sp *proxy.ServicePort) {
		sp.ExternalIPs = []netip.Addr{netip.MustParseAddr("198.51.100.9")}
	})
	empty := svcPort("ns", "empty", "10.96.0.14", func(sp *proxy.ServicePort) { sp.NodePort = 30083 })
	st := &proxy.State{
		Services:    map[proxy.ServicePortName]*proxy.ServicePort{web.Name: web, empty.Name: empty},
		Endpoints:   map[proxy.ServicePortName][]proxy.Endpoint{web.Name: eps("10.244.0.2+")},
		NodeName:    "node-a",
		NodeIPs:     []netip.Addr{proxytest.NodeIP},
		ClusterCIDR: proxytest.ClusterCIDR,
		ServiceCIDR: proxytest.ServiceCIDR,
	}
	if err := b.Sync(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	h := node.Handle(t)
	link, err := h.LinkByName(ipvs.DeviceName)
	if err != nil {
		t.Fatalf("interface: %v", err)
	}
	if link.Type() != "bridge" || link.Attrs().Flags&net.FlagUp != 0 {
		t.Errorf("interface %s: type %s flags %v, want a bridge kept down", ipvs.DeviceName, link.Type(), link.Attrs().Flags)
	}
	got, _ := addrs.List()
	if want := []netip.Addr{netip.MustParseAddr("10.96.0.10"), netip.MustParseAddr("10.96.0.14"), netip.MustParseAddr("198.51.100.9")}; !slices.Equal(got, want) {
		t.Errorf("bound %v, want %v", got, want)
	}

	// A local server on the VIPs stands for IPVS: reaching it proves the
	// addresses are delivered locally on the node, link down.
	for _, a := range []string{"10.96.0.10:80", "198.51.100.9:80"} {
		ln, err := node.Listen(ctx, "tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("node " + r.RemoteAddr))
		})}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	// The client namespace routes the external IP through the node.
	for _, from := range []*proxytest.NetNS{node.NetNS, pod.NetNS, node.Client} {
		for _, url := range []string{"http://10.96.0.10/", "http://198.51.100.9/"} {
			if from == node.Client && strings.Contains(url, "10.96.") {
				continue // the client has no route to the service CIDR (kube-proxy's neither)
			}
			out, err := proxytest.HTTPGet(from, url)
			if err != nil || !strings.HasPrefix(out, "node ") {
				t.Errorf("%s from %s: %q %v", url, from.Name, out, err)
			}
		}
	}
	// REJECT: a port without endpoints, an unknown port, an unallocated
	// ClusterIP, a NodePort without endpoints; at once, from the node and
	// from a pod.
	for _, c := range []struct {
		from   *proxytest.NetNS
		target string
	}{
		{pod.NetNS, "10.96.0.14:80"}, {node.NetNS, "10.96.0.14:80"},
		{pod.NetNS, "10.96.0.10:81"}, {pod.NetNS, "10.96.77.77:80"}, {node.NetNS, "10.96.77.77:80"},
		{node.Client, "192.168.77.1:30083"},
	} {
		start := time.Now()
		conn, err := c.from.Dial("tcp", c.target, nil, 3*time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("%s from %s: connected", c.target, c.from.Name)
			continue
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || time.Since(start) > time.Second {
			t.Errorf("%s from %s: %v after %v, want connection refused at once", c.target, c.from.Name, err, time.Since(start))
		}
	}
	// The masquerade chains are in the node's nat table.
	save, err := ex.Run(ctx, nil, mode.Tool("iptables-save"), "-t", "nat")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"-A KUBE-IPVS-SERVICES ! -s 10.244.0.0/16 -d 10.96.0.0/16",
		"-A KUBE-IPVS-POSTROUTING -s 10.244.0.2/32 -d 10.244.0.2/32",
		"-A POSTROUTING -m comment --comment skiff-ipvs-postrouting -j KUBE-IPVS-POSTROUTING",
	} {
		if !strings.Contains(string(save), want) {
			t.Errorf("nat table lacks %q:\n%s", want, save)
		}
	}

	// Unbinding: the external IP goes with its Service.
	delete(st.Services, web.Name)
	if err := b.Sync(ctx, st, []proxy.ServicePortName{web.Name}); err != nil {
		t.Fatal(err)
	}
	if got, _ := addrs.List(); !slices.Equal(got, []netip.Addr{netip.MustParseAddr("10.96.0.14")}) {
		t.Errorf("bound after removing web: %v", got)
	}
	if err := b.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.LinkByName(ipvs.DeviceName); !errors.As(err, new(netlink.LinkNotFoundError)) {
		t.Errorf("interface after Cleanup: %v", err)
	}
	all, err := ex.Run(ctx, nil, mode.Tool("iptables-save"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(all), "IPVS") {
		t.Errorf("rules left after Cleanup:\n%s", all)
	}
}

// exec finds a binary on PATH.
func exec(name string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", errors.New(name + " not found on PATH")
}
