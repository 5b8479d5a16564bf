package trace

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
)

func TestParseResolvConf(t *testing.T) {
	rc := ParseResolvConf([]byte("# kubelet\nnameserver 10.244.0.1\nsearch default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 timeout:2\n"))
	want := ResolvConf{Nameservers: []string{"10.244.0.1"}, Search: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Ndots: 5}
	if !reflect.DeepEqual(rc, want) {
		t.Errorf("got %+v, want %+v", rc, want)
	}
	if rc := ParseResolvConf([]byte("nameserver 1.1.1.1\n")); rc.Ndots != 1 || rc.Search != nil {
		t.Errorf("defaults: %+v", rc)
	}
	if rc := ParseResolvConf([]byte("search a b\ndomain c\noptions ndots:99\n")); !reflect.DeepEqual(rc.Search, []string{"c"}) || rc.Ndots != 15 {
		t.Errorf("last search line wins, ndots capped: %+v", rc)
	}
}

func TestCandidates(t *testing.T) {
	rc := ResolvConf{Search: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Ndots: 5}
	cases := []struct {
		name string
		rc   ResolvConf
		want []string
	}{
		{"backend-svc", rc, []string{"backend-svc.default.svc.cluster.local.", "backend-svc.svc.cluster.local.", "backend-svc.cluster.local.", "backend-svc."}},
		// 4 dots < 5: still the search list first (the ndots:5 cost)
		{"web.prod.svc.cluster.local", rc, []string{"web.prod.svc.cluster.local.default.svc.cluster.local.", "web.prod.svc.cluster.local.svc.cluster.local.",
			"web.prod.svc.cluster.local.cluster.local.", "web.prod.svc.cluster.local."}},
		{"web.prod.svc.cluster.local.", rc, []string{"web.prod.svc.cluster.local."}},
		{"a.b", ResolvConf{Search: []string{"x"}, Ndots: 1}, []string{"a.b.", "a.b.x."}},
		{"a", ResolvConf{Search: []string{"x."}, Ndots: 1}, []string{"a.x.", "a."}},
		{"a", ResolvConf{Ndots: 1}, []string{"a."}},
	}
	for _, c := range cases {
		if got := Candidates(c.name, c.rc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Candidates(%q, ndots %d) = %q, want %q", c.name, c.rc.Ndots, got, c.want)
		}
	}
}

// zone answers like the node DNS: A records for known names, NXDOMAIN
// for the rest; it records the questions.
type zone struct {
	a     map[string]string
	asked []string
	fail  error
}

func (z *zone) exchange(_ context.Context, m *dns.Msg) (*dns.Msg, error) {
	if z.fail != nil {
		return nil, z.fail
	}
	q := m.Question[0]
	z.asked = append(z.asked, q.Name)
	r := new(dns.Msg)
	r.SetReply(m)
	if ip, ok := z.a[q.Name]; ok {
		rr, _ := dns.NewRR(q.Name + " 5 IN A " + ip)
		r.Answer = append(r.Answer, rr)
	} else {
		r.Rcode = dns.RcodeNameError
	}
	return r, nil
}

func TestResolve(t *testing.T) {
	rc := ResolvConf{Nameservers: []string{"10.244.0.1"}, Search: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Ndots: 5}
	z := &zone{a: map[string]string{"backend.other.svc.cluster.local.": "10.96.0.20"}}
	d, warns := Resolve(context.Background(), z.exchange, "backend.other", rc)
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	if d.Answer != "10.96.0.20" || len(d.Queries) != 2 {
		t.Fatalf("got %+v", d)
	}
	if q := d.Queries[0]; q.Name != "backend.other.default.svc.cluster.local." || q.Rcode != "NXDOMAIN" || q.Type != "A" {
		t.Errorf("first query %+v", q)
	}
	if q := d.Queries[1]; q.Rcode != "NOERROR" || !reflect.DeepEqual(q.Answers, []string{"10.96.0.20"}) {
		t.Errorf("second query %+v", q)
	}
	// Nothing answers: every candidate asked, a warning.
	z2 := &zone{}
	d, warns = Resolve(context.Background(), z2.exchange, "nope", rc)
	if len(d.Queries) != 4 || d.Answer != "" || len(warns) != 1 || !strings.Contains(warns[0], "does not resolve") {
		t.Errorf("unresolvable: %+v %v", d, warns)
	}
	// The server is unreachable: one query, a warning, stop.
	z3 := &zone{fail: errors.New("i/o timeout")}
	d, warns = Resolve(context.Background(), z3.exchange, "x", rc)
	if len(d.Queries) != 1 || d.Queries[0].Rcode != "ERROR" || len(warns) != 1 {
		t.Errorf("unreachable: %+v %v", d, warns)
	}
}

func TestParseTarget(t *testing.T) {
	cases := []struct {
		in   string
		want Target
	}{
		{"http://backend-svc", Target{Host: "backend-svc", Port: 80, Protocol: "TCP"}},
		{"backend-svc:8080", Target{Host: "backend-svc", Port: 8080, Protocol: "TCP"}},
		{"https://a.b.c/x?y", Target{Host: "a.b.c", Port: 443, Protocol: "TCP"}},
		{"udp://dns:53", Target{Host: "dns", Port: 53, Protocol: "UDP"}},
		{"http://10.96.0.10:81/", Target{Host: "10.96.0.10", Port: 81, Protocol: "TCP", IP: netip.MustParseAddr("10.96.0.10")}},
		{"http://[fd00::1]:80", Target{Host: "fd00::1", Port: 80, Protocol: "TCP", IP: netip.MustParseAddr("fd00::1")}},
	}
	for _, c := range cases {
		got, err := ParseTarget(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "ftp://x", "tcp://x", "http://x:0", "http://:80", "http://x:99999"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q): no error", bad)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func testService() (*api.Service, []*api.EndpointSlice) {
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "backend"}, Spec: api.ServiceSpec{
		Type: api.ServiceTypeNodePort, ClusterIP: "10.96.0.20", ClusterIPs: []string{"10.96.0.20"},
		Ports: []api.ServicePort{{Name: "http", Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(8080), NodePort: 30080}},
	}}
	sl := &api.EndpointSlice{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "backend-abc", Labels: map[string]string{api.LabelServiceName: "backend"}},
		AddressType: "IPv4", Ports: []api.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}},
		Endpoints: []api.Endpoint{
			{Addresses: []string{"10.244.1.3"}, Conditions: api.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)}, NodeName: ptr("n2"), TargetRef: &api.ObjectReference{Name: "b-3"}},
			{Addresses: []string{"10.244.1.2"}, Conditions: api.EndpointConditions{Ready: ptr(true)}, NodeName: ptr("n1"), TargetRef: &api.ObjectReference{Name: "b-2"}},
			{Addresses: []string{"10.244.1.4"}, Conditions: api.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}, NodeName: ptr("n1"), TargetRef: &api.ObjectReference{Name: "b-4"}},
		}}
	return svc, []*api.EndpointSlice{sl}
}

func TestMatchServiceAndEndpoints(t *testing.T) {
	svc, slices := testService()
	node := netip.MustParseAddr("192.168.1.10")
	m, warns := MatchService([]*api.Service{svc}, netip.MustParseAddr("10.96.0.20"), 80, "TCP", []netip.Addr{node}, "backend")
	if m == nil || m.Via != "clusterIP" || m.Trace.TargetPort != "8080" || m.Trace.PortName != "http" || len(warns) != 0 {
		t.Fatalf("cluster IP: %+v %v", m, warns)
	}
	m2, _ := MatchService([]*api.Service{svc}, node, 30080, "TCP", []netip.Addr{node}, "")
	if m2 == nil || m2.Via != "nodePort" || m2.Trace.IP != node.String() {
		t.Errorf("node port: %+v", m2)
	}
	if m3, w := MatchService([]*api.Service{svc}, netip.MustParseAddr("10.96.0.20"), 81, "TCP", nil, ""); m3 != nil || len(w) != 1 || !strings.Contains(w[0], "no TCP port 81") {
		t.Errorf("wrong port: %+v %v", m3, w)
	}
	if m4, w := MatchService([]*api.Service{svc}, netip.MustParseAddr("10.96.0.20"), 80, "UDP", nil, ""); m4 != nil || len(w) != 1 {
		t.Errorf("wrong protocol: %+v %v", m4, w)
	}

	eps := Endpoints(m, slices)
	if len(eps) != 3 || eps[0].IP != "10.244.1.2" || eps[0].Port != 8080 || eps[0].Pod != "b-2" || eps[0].NodeName != "n1" || !eps[0].Serving {
		t.Fatalf("endpoints %+v", eps)
	}
	if e := eps[2]; e.Ready || !e.Serving || !e.Terminating {
		t.Errorf("terminating endpoint %+v", e)
	}
}

func TestProbabilities(t *testing.T) {
	eps := []api.TraceEndpoint{{IP: "10.244.1.8", Port: 9090, Ready: true}, {IP: "10.244.2.15", Port: 9090, Ready: true}, {IP: "10.244.3.7", Port: 9090, Ready: true}}
	ipt := []api.TraceRule{
		{Chain: "KUBE-SERVICES"},
		{Chain: "KUBE-SVC-X", Probability: 0.3333333333, Endpoint: "10.244.1.8:9090"},
		{Chain: "KUBE-SEP-A", Endpoint: "10.244.1.8:9090"},
		{Chain: "KUBE-SVC-X", Probability: 0.5, Endpoint: "10.244.2.15:9090"},
		{Chain: "KUBE-SEP-B", Endpoint: "10.244.2.15:9090"},
		{Chain: "KUBE-SVC-X", Probability: 1, Endpoint: "10.244.3.7:9090"},
		{Chain: "KUBE-SEP-C", Endpoint: "10.244.3.7:9090"},
	}
	if w := Probabilities("iptables", ipt, eps); len(w) != 0 {
		t.Errorf("warnings %v", w)
	}
	for _, e := range eps {
		if e.Probability < 0.3333 || e.Probability > 0.3334 {
			t.Errorf("iptables: %s gets %v, want 1/3", e.IP, e.Probability)
		}
	}
	nft := []api.TraceRule{
		{Chain: "endpoints-0", Probability: 0.5, Endpoint: "10.244.1.8:9090"},
		{Chain: "endpoints-0", Probability: 0.5, Endpoint: "10.244.9.9:9090"},
	}
	w := Probabilities("nftables", nft, eps)
	if eps[0].Probability != 0.5 || eps[1].Probability != 0 || len(w) != 3 {
		t.Errorf("nftables: %+v, warnings %v", eps, w)
	}
	if !strings.Contains(strings.Join(w, "\n"), "10.244.9.9:9090, which is no endpoint") {
		t.Errorf("no stale-rule warning: %v", w)
	}
}

// TestTraceJSONShape pins the JSON field names the dashboard draws.
func TestTraceJSONShape(t *testing.T) {
	tr := api.Trace{
		TypeMeta: api.TypeMeta{Kind: "Trace", APIVersion: "skiff.dev/v1"},
		Pod:      api.TracePod{Namespace: "default", Name: "client", IP: "10.244.0.5", NodeName: "n1"},
		URL:      "http://backend", Host: "backend", Port: 80, Protocol: "TCP",
		DNS: &api.TraceDNS{Nameservers: []string{"10.244.0.1"}, Search: []string{"default.svc.cluster.local"}, Ndots: 5,
			Queries: []api.TraceDNSQuery{{Name: "backend.default.svc.cluster.local.", Type: "A", Rcode: "NOERROR", Answers: []string{"10.96.0.20"}}}, Answer: "10.96.0.20"},
		Service:   &api.TraceService{Namespace: "default", Name: "backend", Type: "ClusterIP", IP: "10.96.0.20", Port: 80, PortName: "http", TargetPort: "8080"},
		Rules:     &api.TraceRules{Mode: "iptables", Entries: []api.TraceRule{{Table: "nat", Chain: "KUBE-SVC-X", Text: "-A ...", Probability: 0.5, Endpoint: "10.244.1.2:8080"}}},
		Endpoints: []api.TraceEndpoint{{IP: "10.244.1.2", Port: 8080, Ready: true, Serving: true, NodeName: "n1", Pod: "b-1", Probability: 1}},
		Conntrack: []api.TraceConntrack{{Protocol: "TCP", Src: "10.244.0.5:4000", Dst: "10.96.0.20:80", ReplySrc: "10.244.1.2:8080", State: "ESTABLISHED", Timeout: 100}},
		Warnings:  []string{"w"},
	}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"kind", "apiVersion", "pod.namespace", "pod.name", "pod.ip", "pod.nodeName", "url", "host", "port", "protocol",
		"dns.nameservers", "dns.search", "dns.ndots", "dns.queries", "dns.answer",
		"service.namespace", "service.name", "service.type", "service.ip", "service.port", "service.portName", "service.targetPort",
		"rules.mode", "rules.entries", "endpoints", "conntrack", "warnings",
	} {
		var cur any = m
		for _, k := range strings.Split(path, ".") {
			obj, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = obj[k]
		}
		if cur == nil {
			t.Errorf("JSON has no %s: %s", path, b)
		}
	}
	for _, s := range []string{`"name":"backend.default.svc.cluster.local."`, `"rcode":"NOERROR"`, `"answers":["10.96.0.20"]`,
		`"table":"nat"`, `"chain":"KUBE-SVC-X"`, `"text":"-A ..."`, `"probability":0.5`, `"endpoint":"10.244.1.2:8080"`,
		`"ready":true`, `"serving":true`, `"terminating":false`, `"pod":"b-1"`, `"replySrc":"10.244.1.2:8080"`, `"state":"ESTABLISHED"`, `"timeout":100`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("JSON lacks %s: %s", s, b)
		}
	}
}

func TestHeadlessAndExternalName(t *testing.T) {
	svc, slices := testService()
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.Type = "None", []string{"None"}, api.ServiceTypeClusterIP
	ext := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "cache"},
		Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "redis.example.net"}}
	all := []*api.Service{svc, ext}

	// A pod address of a headless Service: no Service port matches, the
	// headless one explains it.
	dst := netip.MustParseAddr("10.244.1.3")
	if m, _ := MatchService(all, dst, 8080, "TCP", nil, "backend"); m != nil {
		t.Fatalf("headless matched a port: %+v", m)
	}
	hs, why := Headless(all, slices, dst)
	if hs == nil || !hs.Headless || hs.Name != "backend" || !strings.Contains(why, "headless") {
		t.Errorf("headless: %+v %q", hs, why)
	}
	if hs, _ := Headless(all, slices, netip.MustParseAddr("10.244.9.9")); hs != nil {
		t.Errorf("an unknown address is no headless endpoint: %+v", hs)
	}

	s, why := ExternalName(all, "cache.default.svc.cluster.local.", "cluster.local")
	if s != ext || !strings.Contains(why, "CNAME to redis.example.net") {
		t.Errorf("external name: %v %q", s, why)
	}
	if s, _ := ExternalName(all, "cache.other.svc.cluster.local.", "cluster.local"); s != nil {
		t.Errorf("other namespace matched: %v", s)
	}
}
