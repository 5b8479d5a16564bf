package kubectl

import (
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// TestPrintTrace: the steps as docs/architecture.md tells them, in order: the search
// expansion and answer, the ClusterIP:port, the rules with 1/3, 1/2, 1,
// the endpoints with state, node and chance, conntrack, warnings.
func TestPrintTrace(t *testing.T) {
	tr := &api.Trace{
		Pod: api.TracePod{Namespace: "default", Name: "client", IP: "10.244.0.5", NodeName: "n1"},
		URL: "http://backend", Host: "backend", Port: 80, Protocol: "TCP",
		DNS: &api.TraceDNS{Nameservers: []string{"10.244.0.1"}, Search: []string{"default.svc.cluster.local", "svc.cluster.local"}, Ndots: 5,
			Queries: []api.TraceDNSQuery{{Name: "backend.default.svc.cluster.local.", Type: "A", Rcode: "NOERROR", Answers: []string{"10.96.0.20"}}},
			Answer:  "10.96.0.20"},
		Service: &api.TraceService{Namespace: "default", Name: "backend", Type: "ClusterIP", IP: "10.96.0.20", Port: 80, PortName: "http", TargetPort: "8080"},
		Rules: &api.TraceRules{Mode: "iptables", Entries: []api.TraceRule{
			{Table: "nat", Chain: "KUBE-SERVICES", Text: "-A KUBE-SERVICES -d 10.96.0.20/32 -j KUBE-SVC-X"},
			{Table: "nat", Chain: "KUBE-SVC-X", Text: "-A KUBE-SVC-X ... --probability 0.3333333333 -j KUBE-SEP-A", Probability: 0.3333333333, Endpoint: "10.244.1.2:8080"},
			{Table: "nat", Chain: "KUBE-SVC-X", Text: "-A KUBE-SVC-X ... --probability 0.5000000000 -j KUBE-SEP-B", Probability: 0.5, Endpoint: "10.244.1.3:8080"},
			{Table: "nat", Chain: "KUBE-SVC-X", Text: "-A KUBE-SVC-X -j KUBE-SEP-C", Probability: 1, Endpoint: "10.244.1.4:8080"},
		}},
		Endpoints: []api.TraceEndpoint{
			{IP: "10.244.1.2", Port: 8080, Ready: true, Serving: true, NodeName: "n1", Pod: "b-1", Probability: 1.0 / 3},
			{IP: "10.244.1.4", Port: 8080, Serving: true, Terminating: true, NodeName: "n2", Pod: "b-3"},
		},
		Conntrack: []api.TraceConntrack{{Protocol: "TCP", Src: "10.244.0.5:40000", Dst: "10.96.0.20:80", ReplySrc: "10.244.1.2:8080", State: "TIME_WAIT", Timeout: 110}},
		Warnings:  []string{"endpoint 10.244.1.4:8080 is terminating"},
	}
	var b strings.Builder
	if err := PrintTrace(&b, tr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	want := []string{
		"Trace from pod default/client (10.244.0.5 on node n1) to http://backend",
		"1. DNS",
		"search default.svc.cluster.local svc.cluster.local; options ndots:5",
		`"backend" has 0 dot(s), fewer than ndots 5: the search list is tried first`,
		"backend.default.svc.cluster.local.  A  NOERROR  10.96.0.20",
		"=> 10.96.0.20",
		"2. Service default/backend (ClusterIP)",
		`10.96.0.20:80 (port "http") -> targetPort 8080`,
		"3. Rules (iptables",
		"probability 1/3, -> 10.244.1.2:8080",
		"probability 1/2, -> 10.244.1.3:8080",
		"probability 1, -> 10.244.1.4:8080",
		"4. Endpoints",
		"33.3%",
		"5. Conntrack",
		"tcp 10.244.0.5:40000 -> 10.96.0.20:80, answered by 10.244.1.2:8080 TIME_WAIT (expires in 110s)",
		"Warnings:\n  - endpoint 10.244.1.4:8080 is terminating",
	}
	last := -1
	for _, w := range want {
		i := strings.Index(out, w)
		if i < 0 {
			t.Errorf("output lacks %q", w)
			continue
		}
		if i < last {
			t.Errorf("%q is out of order", w)
		}
		last = i
	}
	// An address outside the cluster: the egress step.
	b.Reset()
	out2 := &b
	if err := PrintTrace(out2, &api.Trace{Pod: tr.Pod, URL: "http://198.51.100.7", Host: "198.51.100.7", Port: 80, Protocol: "TCP",
		Egress: &api.TraceEgress{Masquerade: true, Rules: []string{"-A SKIFF-EGRESS -j MASQUERADE"}}}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"1. Leaving the cluster", "masqueraded: the node rewrites the source to its own address", "-A SKIFF-EGRESS -j MASQUERADE"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("egress trace output lacks %q:\n%s", w, b.String())
		}
	}
	if got := TracePath("default", "client", "http://backend:80/x?y=1"); got != "/skiff/v1/namespaces/default/pods/client/trace?url=http%3A%2F%2Fbackend%3A80%2Fx%3Fy%3D1" {
		t.Errorf("TracePath = %s", got)
	}
}
