package proxytest_test

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// stubDataplane answers every packet with trace, and a connection with
// trace's first result.
type stubDataplane struct {
	trace func(p proxytest.Packet) []proxytest.Result
}

func (stubDataplane) Name() string                                                      { return "stub" }
func (stubDataplane) Sync(context.Context, *proxy.State, []proxy.ServicePortName) error { return nil }
func (stubDataplane) Cleanup(context.Context) error                                     { return nil }
func (d stubDataplane) Trace(p proxytest.Packet) ([]proxytest.Result, error)            { return d.trace(p), nil }
func (d stubDataplane) Connect(p proxytest.Packet) (proxytest.Result, error) {
	return d.trace(p)[0], nil
}

func caseNamed(t *testing.T, name string) proxytest.Case {
	t.Helper()
	for _, c := range proxytest.Cases() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %q", name)
	return proxytest.Case{}
}

// TestEveryCaseCanFail: a dataplane that drops everything fails at least
// one step of every case, so no case passes whatever a backend does.
func TestEveryCaseCanFail(t *testing.T) {
	drop := stubDataplane{trace: func(proxytest.Packet) []proxytest.Result { return proxytest.Dropped }}
	for _, c := range proxytest.Cases() {
		failures, err := proxytest.CheckSteps(drop, c.Steps)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if len(failures) == 0 {
			t.Errorf("%s: a dataplane dropping everything passes it", c.Name)
		}
	}
}

// TestStickyNeedsAffinity: a dataplane that ignores session affinity
// fails the sticky step and only it.
func TestStickyNeedsAffinity(t *testing.T) {
	c := caseNamed(t, "sessionAffinity ClientIP")
	every := proxytest.DNAT(false, proxytest.Local1, proxytest.Local2, proxytest.Remote1)
	failures, err := proxytest.CheckSteps(stubDataplane{trace: func(proxytest.Packet) []proxytest.Result { return every }}, c.Steps)
	if err != nil {
		t.Fatal(err)
	}
	if len(failures) != 1 || !strings.HasPrefix(failures[0], "its next connection") {
		t.Errorf("failures %q, want the sticky step's only", failures)
	}
}

// TestCaseState: the case's objects become the ports and endpoints the
// proxy core would hand a backend.
func TestCaseState(t *testing.T) {
	c := caseNamed(t, "externalTrafficPolicy Local, internalTrafficPolicy Local, endpoints here and on another node")
	st := c.State()
	if len(st.Services) != 1 {
		t.Fatalf("services %v", st.Services)
	}
	for n, sp := range st.Services {
		if !sp.ExternalPolicyLocal || !sp.InternalPolicyLocal || sp.NodePort != 30080 ||
			!slices.Equal(sp.LoadBalancerIPs, []netip.Addr{proxytest.LBIP}) || !slices.Equal(sp.ExternalIPs, []netip.Addr{proxytest.ExternalIP}) {
			t.Errorf("port %+v", sp)
		}
		eps := st.Endpoints[n]
		if len(eps) != 2 || eps[0].AddrPort() != proxytest.Local1 || !eps[0].IsLocal || eps[1].AddrPort() != proxytest.Remote1 || eps[1].IsLocal {
			t.Errorf("endpoints %+v", eps)
		}
	}
}
