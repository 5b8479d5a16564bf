package nftables

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestTraceRulesKernel programs a netns through netlink and reads the
// rules back: the service-ips element, the Service chain's numgen rule and
// the three endpoint-map elements at 1/3 each; a NodePort through
// service-nodeports; affinity's per-endpoint chains; a Service without
// endpoints.
func TestTraceRulesKernel(t *testing.T) {
	c := newTestCluster(t, 3)
	web := spn("web", "http", "TCP")
	empty := spn("empty", "http", "TCP")
	sticky := spn("sticky", "", "TCP")
	addSvc(c.st, web, "10.96.0.10", 80, nodePort(30080))
	c.st.Endpoints[web] = c.endpoints(0, 1, 2)
	addSvc(c.st, empty, "10.96.0.12", 80)
	addSvc(c.st, sticky, "10.96.0.13", 80, affinity(time.Hour))
	c.st.Endpoints[sticky] = c.endpoints(0, 1)
	c.sync(t)

	var tracer proxy.RuleTracer = c.proxier
	ctx := context.Background()
	shares := func(rules []api.TraceRule) map[string]float64 {
		m := map[string]float64{}
		for _, r := range rules {
			if r.Endpoint != "" {
				m[r.Endpoint] += r.Probability
			}
		}
		return m
	}
	dump := func(rules []api.TraceRule) string {
		var b strings.Builder
		for _, r := range rules {
			b.WriteString(r.Chain + ": " + r.Text + "\n")
		}
		return b.String()
	}
	wantThirds := func(what string, rules []api.TraceRule) {
		t.Helper()
		got := shares(rules)
		if len(got) != 3 {
			t.Fatalf("%s: endpoints %v, want 3:\n%s", what, got, dump(rules))
		}
		for _, ip := range c.podIPs {
			k := netip.AddrPortFrom(ip, 8080).String()
			if p := got[k]; p < 0.333 || p > 0.334 {
				t.Errorf("%s: %s gets %v, want 1/3:\n%s", what, k, p, dump(rules))
			}
		}
	}

	rules, err := tracer.TraceRules(ctx, netip.MustParseAddrPort("10.96.0.10:80"), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("10.96.0.10:80\n%s", dump(rules))
	if len(rules) == 0 || rules[0].Chain != serviceIPsMap || !strings.Contains(rules[0].Text, "goto service-") {
		t.Errorf("first entry should be the service-ips element:\n%s", dump(rules))
	}
	numgen := false
	for _, r := range rules {
		numgen = numgen || strings.Contains(r.Text, "numgen random mod 3")
	}
	if !numgen {
		t.Errorf("no numgen rule:\n%s", dump(rules))
	}
	wantThirds("cluster IP", rules)

	np, err := tracer.TraceRules(ctx, netip.AddrPortFrom(proxytest.NodeIP, 30080), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node port\n%s", dump(np))
	if len(np) == 0 || np[0].Chain != serviceNodePortsMap {
		t.Errorf("node port: first entry should be the service-nodeports element:\n%s", dump(np))
	}
	wantThirds("node port", np)

	none, err := tracer.TraceRules(ctx, netip.MustParseAddrPort("10.96.0.12:80"), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	if len(none) == 0 || none[0].Chain != noEndpointServicesMap || len(shares(none)) != 0 {
		t.Errorf("no endpoints: want the no-endpoint-services element only:\n%s", dump(none))
	}

	st, err := tracer.TraceRules(ctx, netip.MustParseAddrPort("10.96.0.13:80"), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("affinity\n%s", dump(st))
	if got := shares(st); len(got) != 2 || got[netip.AddrPortFrom(c.podIPs[0], 8080).String()] != 0.5 {
		t.Errorf("affinity: shares %v, want 1/2 each:\n%s", got, dump(st))
	}

	nothing, err := tracer.TraceRules(ctx, netip.MustParseAddrPort("10.96.0.10:81"), "TCP")
	if err != nil || len(nothing) != 0 {
		t.Errorf("another port: %v %v, want nothing", nothing, err)
	}
}
