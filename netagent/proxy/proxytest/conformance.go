package proxytest

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/proxy"
)

// Dataplane is one proxy mode on its fake kernel, as Conformance drives
// it: the backend, and a packet tracer over what the backend programmed.
// The node is the one of topology.go: NodeName, its addresses NodeIP and
// Gateway (the pod bridge), ClusterCIDR, ServiceCIDR.
type Dataplane interface {
	proxy.Backend
	// Trace returns every outcome the first packet of a new connection
	// can have (any order, duplicates allowed), without changing any state.
	Trace(p Packet) ([]Result, error)
	// Connect sends the first packet of one new connection: one outcome,
	// chosen as the kernel would, and remembered where the kernel
	// remembers it (session affinity).
	Connect(p Packet) (Result, error)
}

// Source is where a packet comes from.
type Source struct {
	Name string
	IP   netip.Addr
	// Node: sent by a process of the node itself (the output path); else
	// the packet arrives on one of the node's interfaces.
	Node bool
}

// The sources of the Conformance table.
var (
	LocalPod    = Source{Name: "a pod on this node", IP: netip.MustParseAddr("10.244.0.9")}
	LocalPod2   = Source{Name: "another pod on this node", IP: netip.MustParseAddr("10.244.0.10")}
	RemotePod   = Source{Name: "a pod on another node", IP: netip.MustParseAddr("10.244.1.9")}
	ThisNode    = Source{Name: "the node itself", IP: NodeIP, Node: true}
	External    = Source{Name: "an external client", IP: ClientIP}
	OutOfRanges = Source{Name: "an external client outside loadBalancerSourceRanges", IP: netip.MustParseAddr("192.168.88.8")}
)

// Packet is the first packet of a connection.
type Packet struct {
	From  Source
	Dst   netip.AddrPort
	Proto string // "TCP" or "UDP"
}

func (p Packet) String() string {
	return fmt.Sprintf("%s (%s) -> %s/%s", p.From.Name, p.From.IP, p.Dst, p.Proto)
}

// Verdict is what happens to a packet.
type Verdict string

// Verdicts.
const (
	// VerdictDNAT: accepted, destination rewritten to an endpoint.
	VerdictDNAT Verdict = "dnat"
	// VerdictAccept: accepted unchanged (no Service rule for it).
	VerdictAccept Verdict = "accept"
	VerdictDrop   Verdict = "drop"
	// VerdictReject: refused at once (ICMP port unreachable).
	VerdictReject Verdict = "reject"
)

// Result is one outcome of a packet.
type Result struct {
	Verdict Verdict
	// Endpoint: where VerdictDNAT sent the packet.
	Endpoint netip.AddrPort
	// Masquerade: the packet's source is rewritten to the node's.
	Masquerade bool
}

func (r Result) String() string {
	s := string(r.Verdict)
	if r.Verdict == VerdictDNAT {
		s += " " + r.Endpoint.String()
	}
	if r.Masquerade {
		s += " masq"
	}
	return s
}

// DNAT is the outcomes "sent to one of eps", masqueraded or not.
func DNAT(masq bool, eps ...netip.AddrPort) []Result {
	out := make([]Result, len(eps))
	for i, e := range eps {
		out[i] = Result{Verdict: VerdictDNAT, Endpoint: e, Masquerade: masq}
	}
	return out
}

// The single-outcome results.
var (
	Dropped   = []Result{{Verdict: VerdictDrop}}
	Rejected  = []Result{{Verdict: VerdictReject}}
	Untouched = []Result{{Verdict: VerdictAccept}}
)

// Step is one packet of a case and what must happen to it.
type Step struct {
	Name   string
	Packet Packet
	// Want is every outcome the packet may have: the backend must give
	// exactly this set.
	Want []Result
	// Connect: the step opens one connection (Dataplane.Connect); its
	// outcome must be one of Want, and later Sticky steps from the same
	// source refer to it.
	Connect bool
	// Sticky: the packet's only outcome must be the one the last Connect
	// from the same source had (session affinity); Want is not used.
	Sticky bool
	// Except holds, by backend name (proxy.Backend.Name), what a backend
	// gives instead of Want and why: kube-proxy's own mode of that kind
	// differs the same way.
	Except map[string]Exception
}

// Exception is a backend's documented deviation from a step's Want.
type Exception struct {
	Want []Result
	Why  string
}

// Case is a set of Services and EndpointSlices and the packets sent
// against them.
type Case struct {
	Name     string
	Services []*api.Service
	Slices   []*api.EndpointSlice
	Steps    []Step
}

// State converts the case's objects into the State a backend is given,
// as the proxy core does (proxy.ServicePortsFor, proxy.EndpointsFor).
func (c Case) State() *proxy.State {
	st := conformanceNode()
	for _, svc := range c.Services {
		ports, _ := proxy.ServicePortsFor(svc)
		var own []*api.EndpointSlice
		for _, sl := range c.Slices {
			if sl.Namespace == svc.Namespace && sl.Labels[api.LabelServiceName] == svc.Name {
				own = append(own, sl)
			}
		}
		maps.Copy(st.Endpoints, proxy.EndpointsFor(ports, own, NodeName))
		for _, sp := range ports {
			st.Services[sp.Name] = sp
		}
	}
	return st
}

func conformanceNode() *proxy.State {
	return &proxy.State{
		Services:    map[proxy.ServicePortName]*proxy.ServicePort{},
		Endpoints:   map[proxy.ServicePortName][]proxy.Endpoint{},
		NodeName:    NodeName,
		NodeIPs:     []netip.Addr{NodeIP},
		ClusterCIDR: ClusterCIDR,
		ServiceCIDR: ServiceCIDR,
	}
}

// NodeAddrs are the simulated node's own addresses (what a tracer treats
// as local, besides loopback).
func NodeAddrs() []netip.Addr { return []netip.Addr{NodeIP, Gateway} }

// Conformance runs every case of Cases against fresh dataplanes, twice:
// once programmed by one full sync, once by a full sync of no Services
// followed by a partial sync adding the case's.
func Conformance(t *testing.T, newDataplane func(t *testing.T) Dataplane) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			for _, partial := range []bool{false, true} {
				how := "full sync"
				if partial {
					how = "partial sync"
				}
				t.Run(how, func(t *testing.T) {
					dp := newDataplane(t)
					st := c.State()
					ctx := context.Background()
					if partial {
						if err := dp.Sync(ctx, conformanceNode(), nil); err != nil {
							t.Fatalf("full sync of no Services: %v", err)
						}
						if err := dp.Sync(ctx, st, slices.Collect(maps.Keys(st.Services))); err != nil {
							t.Fatalf("partial sync: %v", err)
						}
					} else if err := dp.Sync(ctx, st, nil); err != nil {
						t.Fatalf("full sync: %v", err)
					}
					runSteps(t, dp, c.Steps)
				})
			}
		})
	}
}

func runSteps(t *testing.T, dp Dataplane, steps []Step) {
	t.Helper()
	failures, err := CheckSteps(dp, steps)
	for _, f := range failures {
		t.Error(f)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// CheckSteps sends the steps' packets to dp in order and returns one
// message per step whose outcome is not what the step (or its exception
// for dp) wants; err is a tracer error, which ends the steps.
func CheckSteps(dp Dataplane, steps []Step) (failures []string, err error) {
	connected := map[netip.Addr]Result{}
	for _, s := range steps {
		want, why := s.Want, ""
		if e, ok := s.Except[dp.Name()]; ok {
			want, why = e.Want, " (exception: "+e.Why+")"
		}
		if s.Connect {
			got, err := dp.Connect(s.Packet)
			if err != nil {
				return failures, fmt.Errorf("%s: connect %v: %w", s.Name, s.Packet, err)
			}
			if !slices.Contains(want, got) {
				failures = append(failures, fmt.Sprintf("%s: connect %v: got %v, want one of %v%s", s.Name, s.Packet, got, resultSet(want), why))
			}
			connected[s.Packet.From.IP] = got
			continue
		}
		if s.Sticky {
			prev, ok := connected[s.Packet.From.IP]
			if !ok {
				return failures, fmt.Errorf("%s: no earlier Connect from %s", s.Name, s.Packet.From.IP)
			}
			want = []Result{prev}
		}
		got, err := dp.Trace(s.Packet)
		if err != nil {
			return failures, fmt.Errorf("%s: trace %v: %w", s.Name, s.Packet, err)
		}
		if g, w := resultSet(got), resultSet(want); !slices.Equal(g, w) {
			failures = append(failures, fmt.Sprintf("%s: %v\n got: %s\nwant: %s%s", s.Name, s.Packet, strings.Join(g, ", "), strings.Join(w, ", "), why))
		}
	}
	return failures, nil
}

// resultSet is the distinct outcomes, sorted.
func resultSet(rs []Result) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}
