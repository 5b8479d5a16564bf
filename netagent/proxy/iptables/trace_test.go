package iptables_test

import (
	"context"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
)

// TestTraceSaveSeeds walks docs/architecture.md's iptables-save output (testdata):
// KUBE-SERVICES -> KUBE-SVC with 1/3, 1/2, then the last jump, each to a
// KUBE-SEP that DNATs.
func TestTraceSaveSeeds(t *testing.T) {
	save, err := os.ReadFile("testdata/data-channel.iptables-save.txt")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := iptables.TraceSave(save, "nat", netip.MustParseAddrPort("10.96.88.42:9090"), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		t.Logf("%s %-28s p=%.4f ep=%s", r.Table, r.Chain, r.Probability, r.Endpoint)
	}
	type want struct {
		chainPrefix string
		prob        float64
		endpoint    string
	}
	wants := []want{
		{"KUBE-SERVICES", 0, ""},
		{"KUBE-SVC-", 0, ""}, // ! -s cluster -> KUBE-MARK-MASQ
		{"KUBE-SVC-", 0.3333333333, "10.244.1.8:9090"},
		{"KUBE-SEP-", 0, ""}, // hairpin masquerade
		{"KUBE-SEP-", 0, "10.244.1.8:9090"},
		{"KUBE-SVC-", 0.5, "10.244.2.15:9090"},
		{"KUBE-SEP-", 0, ""},
		{"KUBE-SEP-", 0, "10.244.2.15:9090"},
		{"KUBE-SVC-", 1, "10.244.3.7:9090"},
		{"KUBE-SEP-", 0, ""},
		{"KUBE-SEP-", 0, "10.244.3.7:9090"},
	}
	if len(rules) != len(wants) {
		t.Fatalf("got %d rules, want %d", len(rules), len(wants))
	}
	for i, w := range wants {
		r := rules[i]
		if !strings.HasPrefix(r.Chain, w.chainPrefix) || r.Probability != w.prob || r.Endpoint != w.endpoint {
			t.Errorf("rule %d = %s p=%v ep=%q, want %s* p=%v ep=%q", i, r.Chain, r.Probability, r.Endpoint, w.chainPrefix, w.prob, w.endpoint)
		}
	}
	// Another port of the same address meets nothing.
	other, err := iptables.TraceSave(save, "nat", netip.MustParseAddrPort("10.96.88.42:80"), "TCP")
	if err != nil || len(other) != 0 {
		t.Errorf("port 80: %v, %v; want no rule", other, err)
	}
	udp, err := iptables.TraceSave(save, "nat", netip.MustParseAddrPort("10.96.88.42:9090"), "UDP")
	if err != nil || len(udp) != 0 {
		t.Errorf("udp: %v, %v; want no rule", udp, err)
	}
}

// TestTraceRulesFromFake reads the rules back through the validating fake
// (iptables-save of what a sync wrote): ClusterIP, NodePort, and a
// Service without endpoints (the filter table's REJECT).
func TestTraceRulesFromFake(t *testing.T) {
	fake := iptablestest.New(iptables.ModeNFT)
	b := newBackend(t, fake, iptables.Config{})
	web := svcPort("default", "web", "10.96.0.10", func(sp *proxy.ServicePort) { sp.NodePort = 30080 })
	empty := svcPort("default", "empty", "10.96.0.11", nil)
	doSync(t, b, newState(svcWithEps{web, eps("10.244.1.2", "10.244.2.2")}, svcWithEps{empty, nil}), nil)

	var tracer proxy.RuleTracer = b
	rules, err := tracer.TraceRules(context.Background(), netip.MustParseAddrPort("10.96.0.10:80"), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	if got := endpointShares(rules); got["10.244.1.2:8080"] != 0.5 || got["10.244.2.2:8080"] != 1 {
		// the second is the unconditional last jump
		t.Errorf("cluster IP: probabilities %v", got)
	}
	dnats := 0
	for _, r := range rules {
		if strings.Contains(r.Text, "DNAT") {
			dnats++
		}
	}
	if dnats != 2 {
		t.Errorf("cluster IP: %d DNAT rules, want 2:\n%s", dnats, texts(rules))
	}

	np, err := tracer.TraceRules(context.Background(), netip.AddrPortFrom(nodeIP, 30080), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	if !hasChain(np, "KUBE-NODEPORTS") || !hasChain(np, "KUBE-EXT-") || countEndpoints(np) != 2 {
		t.Errorf("node port: want KUBE-NODEPORTS -> KUBE-EXT -> KUBE-SVC -> 2 endpoints, got\n%s", texts(np))
	}

	rej, err := tracer.TraceRules(context.Background(), netip.MustParseAddrPort("10.96.0.11:80"), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	if len(rej) == 0 || rej[0].Table != "filter" || !strings.Contains(rej[0].Text, "REJECT") {
		t.Errorf("no endpoints: want the filter REJECT first, got\n%s", texts(rej))
	}
}

func endpointShares(rules []api.TraceRule) map[string]float64 {
	m := map[string]float64{}
	for _, r := range rules {
		if r.Endpoint != "" && strings.HasPrefix(r.Chain, "KUBE-SVC-") {
			m[r.Endpoint] = r.Probability
		}
	}
	return m
}

func countEndpoints(rules []api.TraceRule) int {
	n := 0
	for _, r := range rules {
		if r.Endpoint != "" && strings.HasPrefix(r.Chain, "KUBE-SEP-") {
			n++
		}
	}
	return n
}

func hasChain(rules []api.TraceRule, prefix string) bool {
	for _, r := range rules {
		if strings.HasPrefix(r.Chain, prefix) {
			return true
		}
	}
	return false
}

func texts(rules []api.TraceRule) string {
	var b strings.Builder
	for _, r := range rules {
		b.WriteString(r.Table + " " + r.Text + "\n")
	}
	return b.String()
}
