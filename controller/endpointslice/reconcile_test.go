package endpointslice

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- builders ----

const testNS = "ns"

type svcOpt func(*api.Service)

func testService(opts ...svcOpt) *api.Service {
	s := &api.Service{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: api.ObjectMeta{
			Name: "web", Namespace: testNS, UID: "svc-uid",
			CreationTimestamp: api.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		},
		Spec: api.ServiceSpec{
			Selector:   map[string]string{"app": "web"},
			ClusterIP:  "10.96.0.10",
			IPFamilies: []string{api.IPv4Protocol},
			Ports: []api.ServicePort{{
				Name: "http", Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(8080),
			}},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

type podOpt func(*api.Pod)

// testPod is a Running pod app=web named name with IP ip (none when "").
func testPod(name, ip string, ready bool, opts ...podOpt) *api.Pod {
	p := &api.Pod{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{
			Name: name, Namespace: testNS, UID: "uid-" + name,
			Labels: map[string]string{"app": "web"},
		},
		Spec: api.PodSpec{
			NodeName: "node-1",
			Containers: []api.Container{{
				Name: "c", Image: "img",
				Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: api.ProtocolTCP}},
			}},
		},
		Status: api.PodStatus{Phase: api.PodRunning},
	}
	if ip != "" {
		p.Status.PodIP = ip
		p.Status.PodIPs = []api.PodIP{{IP: ip}}
	}
	status := api.ConditionFalse
	if ready {
		status = api.ConditionTrue
	}
	p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: status}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func terminating(p *api.Pod) {
	t := api.NewTime(time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC))
	p.DeletionTimestamp = &t
}

func phase(ph string) podOpt { return func(p *api.Pod) { p.Status.Phase = ph } }

func hostname(host, sub string) podOpt {
	return func(p *api.Pod) { p.Spec.Hostname, p.Spec.Subdomain = host, sub }
}

func containerPort(name string, port int32) podOpt {
	return func(p *api.Pod) {
		p.Spec.Containers[0].Ports = []api.ContainerPort{{Name: name, ContainerPort: port, Protocol: api.ProtocolTCP}}
	}
}

func podIPs(ips ...string) podOpt {
	return func(p *api.Pod) {
		p.Status.PodIP = ips[0]
		p.Status.PodIPs = nil
		for _, ip := range ips {
			p.Status.PodIPs = append(p.Status.PodIPs, api.PodIP{IP: ip})
		}
	}
}

func readyAt(t time.Time) podOpt {
	return func(p *api.Pod) { p.Status.Conditions[0].LastTransitionTime = api.NewTime(t) }
}

// manyPods returns n ready pods p0000..p(n-1) with IPs 10.244.x.y.
func manyPods(n int) []*api.Pod {
	out := make([]*api.Pod, n)
	for i := range n {
		out[i] = testPod(fmt.Sprintf("p%04d", i), fmt.Sprintf("10.244.%d.%d", i/250, i%250+1), true)
	}
	return out
}

// ---- a fake API that applies plans the way the server would ----

type fakeAPI struct {
	slices map[string]*api.EndpointSlice
	n      int
	memo   Memo // kept across the scenario's calls, as the controller does
}

func newFakeAPI() *fakeAPI { return &fakeAPI{slices: map[string]*api.EndpointSlice{}} }

func (f *fakeAPI) apply(t testing.TB, plan Plan) {
	t.Helper()
	for _, s := range plan.Create {
		if s.Name != "" || s.GenerateName == "" {
			t.Fatalf("create with name %q, generateName %q", s.Name, s.GenerateName)
		}
		c := api.DeepCopy(s)
		f.n++
		c.Name = fmt.Sprintf("%s%05d", s.GenerateName, f.n)
		c.UID = "slice-uid-" + c.Name
		c.Generation = 1
		c.ResourceVersion = strconv.Itoa(f.n)
		f.slices[c.Name] = c
	}
	for _, s := range plan.Update {
		old, ok := f.slices[s.Name]
		if !ok {
			t.Fatalf("update of unknown slice %q", s.Name)
		}
		if s.ResourceVersion != old.ResourceVersion || s.UID != old.UID {
			t.Fatalf("update of %q: rv %q uid %q, stored rv %q uid %q", s.Name, s.ResourceVersion, s.UID, old.ResourceVersion, old.UID)
		}
		c := api.DeepCopy(s)
		f.n++
		c.Generation = old.Generation + 1
		c.ResourceVersion = strconv.Itoa(f.n)
		f.slices[c.Name] = c
	}
	for _, s := range plan.Delete {
		if _, ok := f.slices[s.Name]; !ok {
			t.Fatalf("delete of unknown slice %q", s.Name)
		}
		delete(f.slices, s.Name)
	}
}

func (f *fakeAPI) list() []*api.EndpointSlice {
	out := make([]*api.EndpointSlice, 0, len(f.slices))
	for _, name := range slices.Sorted(maps.Keys(f.slices)) {
		out = append(out, f.slices[name])
	}
	return out
}

// put stores slices as existing ones (name, uid and generation kept).
func (f *fakeAPI) put(ss ...*api.EndpointSlice) {
	for _, s := range ss {
		f.n++
		c := api.DeepCopy(s)
		if c.UID == "" {
			c.UID = "slice-uid-" + c.Name
		}
		c.ResourceVersion = strconv.Itoa(f.n)
		if c.Generation == 0 {
			c.Generation = 1
		}
		f.slices[c.Name] = c
	}
}

// reconcile runs Reconcile on the fake's slices, checks the plan's
// invariants and returns it. It also checks that the Memo changes
// nothing and that the plan shares no memory with the input or the Memo.
func (f *fakeAPI) reconcile(t *testing.T, svc *api.Service, pods []*api.Pod, maxPerSlice int, trigger time.Time) Plan {
	t.Helper()
	in := Input{Service: svc, Pods: pods, Slices: f.list(), MaxEndpointsPerSlice: maxPerSlice, TriggerTime: trigger}
	before := mustJSON(t, in)
	plan := Reconcile(in)
	if after := mustJSON(t, in); after != before {
		t.Fatalf("Reconcile mutated its input")
	}
	want := mustJSON(t, plan)
	in.Memo = &f.memo
	memoized := Reconcile(in)
	if got := mustJSON(t, memoized); got != want {
		t.Fatalf("plan with a Memo differs:\n%s\nwithout:\n%s", got, want)
	}
	scribble(memoized)
	if got := mustJSON(t, Reconcile(in)); got != want {
		t.Fatalf("plan shares memory with the input or the Memo: after scribbling on one, the next differs:\n%s\nwant:\n%s", got, want)
	}
	if after := mustJSON(t, Input{Service: svc, Pods: pods, Slices: f.list(), MaxEndpointsPerSlice: maxPerSlice, TriggerTime: trigger}); after != before {
		t.Fatalf("scribbling on the plan changed the input")
	}
	checkPlan(t, svc, maxPerSlice, plan)
	return plan
}

// scribble overwrites everything reachable from the plan's written slices.
func scribble(p Plan) {
	for _, s := range append(slices.Clone(p.Create), p.Update...) {
		for k := range s.Labels {
			s.Labels[k] = "scribbled"
		}
		for k := range s.Annotations {
			s.Annotations[k] = "scribbled"
		}
		for _, o := range s.OwnerReferences {
			*o.Controller, *o.BlockOwnerDeletion = false, false
		}
		for _, port := range s.Ports {
			*port.Name, *port.Port, *port.Protocol = "scribbled", 1, "SCRIBBLED"
		}
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			for j := range ep.Addresses {
				ep.Addresses[j] = "scribbled"
			}
			*ep.Conditions.Ready, *ep.Conditions.Serving, *ep.Conditions.Terminating = true, true, true
			for _, sp := range []*string{ep.NodeName, ep.Hostname, ep.Zone} {
				if sp != nil {
					*sp = "scribbled"
				}
			}
			ep.TargetRef.Name = "scribbled"
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkPlan checks what every written slice must satisfy.
func checkPlan(t *testing.T, svc *api.Service, maxPerSlice int, plan Plan) {
	t.Helper()
	if maxPerSlice == 0 {
		maxPerSlice = DefaultMaxEndpointsPerSlice
	}
	written := append(slices.Clone(plan.Create), plan.Update...)
	for _, s := range written {
		if len(s.Endpoints) > maxPerSlice {
			t.Errorf("slice %q has %d endpoints, max %d", s.Name, len(s.Endpoints), maxPerSlice)
		}
		if s.Endpoints == nil || s.Ports == nil {
			t.Errorf("slice %q: endpoints or ports is null", s.Name)
		}
		if s.Labels[api.LabelServiceName] != svc.Name || s.Labels[api.LabelManagedBy] != ControllerName {
			t.Errorf("slice %q labels %v", s.Name, s.Labels)
		}
		if s.Namespace != svc.Namespace {
			t.Errorf("slice %q namespace %q", s.Name, s.Namespace)
		}
		ref := api.ControllerRef(&s.ObjectMeta)
		if ref == nil || ref.UID != svc.UID || ref.Kind != "Service" || ref.APIVersion != "v1" || ref.Name != svc.Name ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("slice %q owner references %+v", s.Name, s.OwnerReferences)
		}
		if errs := api.ValidateEndpointSlice(withName(s)); len(errs) > 0 {
			t.Errorf("slice %q invalid: %v", s.Name, errs)
		}
	}
}

func withName(s *api.EndpointSlice) *api.EndpointSlice {
	c := api.DeepCopy(s)
	if c.Name == "" {
		c.Name = c.GenerateName + "x"
	}
	api.DefaultEndpointSlice(c)
	return c
}

// converge applies plans until Reconcile has nothing left to do (at most
// twice: a second write would be a bug) and returns the first plan.
func (f *fakeAPI) converge(t *testing.T, svc *api.Service, pods []*api.Pod, maxPerSlice int) Plan {
	t.Helper()
	plan := f.reconcile(t, svc, pods, maxPerSlice, time.Time{})
	f.apply(t, plan)
	if again := f.reconcile(t, svc, pods, maxPerSlice, time.Time{}); !again.Empty() {
		t.Fatalf("not idempotent: second plan creates %d, updates %v, deletes %v",
			len(again.Create), names(again.Update), names(again.Delete))
	}
	return plan
}

func names(ss []*api.EndpointSlice) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func sizes(ss []*api.EndpointSlice) []int {
	out := make([]int, 0, len(ss))
	for _, s := range ss {
		out = append(out, len(s.Endpoints))
	}
	return out
}

// sliceOf returns the name of the slice holding pod, or "".
func (f *fakeAPI) sliceOf(pod string) string {
	for _, s := range f.list() {
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil && ep.TargetRef.Name == pod {
				return s.Name
			}
		}
	}
	return ""
}

func (f *fakeAPI) endpoint(pod string) *api.Endpoint {
	for _, s := range f.list() {
		for i, ep := range s.Endpoints {
			if ep.TargetRef != nil && ep.TargetRef.Name == pod {
				return &s.Endpoints[i]
			}
		}
	}
	return nil
}

func (f *fakeAPI) total() int {
	n := 0
	for _, s := range f.slices {
		n += len(s.Endpoints)
	}
	return n
}

// ---- endpoint content ----

// podToEndpoint is the endpoint Reconcile would write for pod.
func podToEndpoint(pod *api.Pod, svc *api.Service, addrType string) *api.Endpoint {
	d := derivePod(pod, svc)
	ep := d.eps[familyIndex(addrType)].endpoint()
	return &ep
}

func TestPodToEndpoint(t *testing.T) {
	tru, fal := ptr(true), ptr(false)
	cases := []struct {
		name      string
		svc       *api.Service
		pod       *api.Pod
		addrType  string
		addresses []string
		ready     *bool
		serving   *bool
		term      *bool
		hostname  *string
	}{
		{name: "ready pod", svc: testService(), pod: testPod("a", "10.0.0.1", true),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: tru, serving: tru, term: fal},
		{name: "not ready pod", svc: testService(), pod: testPod("a", "10.0.0.1", false),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: fal, serving: fal, term: fal},
		{name: "no Ready condition", svc: testService(), pod: testPod("a", "10.0.0.1", true, func(p *api.Pod) { p.Status.Conditions = nil }),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: fal, serving: fal, term: fal},
		{name: "terminating ready pod is serving, not ready", svc: testService(), pod: testPod("a", "10.0.0.1", true, terminating),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: fal, serving: tru, term: tru},
		{name: "terminating not-ready pod", svc: testService(), pod: testPod("a", "10.0.0.1", false, terminating),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: fal, serving: fal, term: tru},
		{name: "publishNotReadyAddresses: not ready pod is ready", svc: testService(func(s *api.Service) { s.Spec.PublishNotReadyAddresses = true }),
			pod: testPod("a", "10.0.0.1", false), addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: tru, serving: fal, term: fal},
		{name: "publishNotReadyAddresses: terminating pod is ready", svc: testService(func(s *api.Service) { s.Spec.PublishNotReadyAddresses = true }),
			pod: testPod("a", "10.0.0.1", false, terminating), addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: tru, serving: fal, term: tru},
		{name: "hostname when subdomain is the service", svc: testService(), pod: testPod("a", "10.0.0.1", true, hostname("a", "web")),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: tru, serving: tru, term: fal, hostname: ptr("a")},
		{name: "no hostname when subdomain is another service", svc: testService(), pod: testPod("a", "10.0.0.1", true, hostname("a", "other")),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: tru, serving: tru, term: fal},
		{name: "no hostname without spec.hostname", svc: testService(), pod: testPod("a", "10.0.0.1", true, hostname("", "web")),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: tru, serving: tru, term: fal},
		{name: "no hostname across namespaces", svc: testService(func(s *api.Service) { s.Namespace = "other" }),
			pod: testPod("a", "10.0.0.1", true, hostname("a", "web")), addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: tru, serving: tru, term: fal},
		{name: "dual-stack pod, IPv4 slice", svc: testService(), pod: testPod("a", "", true, podIPs("10.0.0.1", "fd00::1")),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.1"}, ready: tru, serving: tru, term: fal},
		{name: "dual-stack pod, IPv6 slice", svc: testService(), pod: testPod("a", "", true, podIPs("10.0.0.1", "fd00:0::1")),
			addrType: api.AddressTypeIPv6, addresses: []string{"fd00::1"}, ready: tru, serving: tru, term: fal},
		{name: "IPv6-only pod, IPv4 slice: no address", svc: testService(), pod: testPod("a", "fd00::1", true),
			addrType: api.AddressTypeIPv4, addresses: []string{}, ready: tru, serving: tru, term: fal},
		{name: "podIP without podIPs", svc: testService(), pod: testPod("a", "", true, func(p *api.Pod) { p.Status.PodIP = "10.0.0.9" }),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.9"}, ready: tru, serving: tru, term: fal},
		{name: "unparsable IP skipped", svc: testService(), pod: testPod("a", "", true, podIPs("bogus", "10.0.0.2")),
			addrType: api.AddressTypeIPv4, addresses: []string{"10.0.0.2"}, ready: tru, serving: tru, term: fal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := podToEndpoint(tc.pod, tc.svc, tc.addrType)
			if !slices.Equal(ep.Addresses, tc.addresses) {
				t.Errorf("addresses %v, want %v", ep.Addresses, tc.addresses)
			}
			if !ptrEqual(ep.Conditions.Ready, tc.ready) || !ptrEqual(ep.Conditions.Serving, tc.serving) || !ptrEqual(ep.Conditions.Terminating, tc.term) {
				t.Errorf("conditions ready=%v serving=%v terminating=%v, want %v %v %v",
					*ep.Conditions.Ready, *ep.Conditions.Serving, *ep.Conditions.Terminating, *tc.ready, *tc.serving, *tc.term)
			}
			if !ptrEqual(ep.Hostname, tc.hostname) {
				t.Errorf("hostname %v, want %v", ep.Hostname, tc.hostname)
			}
			want := api.ObjectReference{Kind: "Pod", Namespace: tc.pod.Namespace, Name: tc.pod.Name, UID: tc.pod.UID}
			if ep.TargetRef == nil || *ep.TargetRef != want {
				t.Errorf("targetRef %+v, want %+v", ep.TargetRef, want)
			}
			if ep.NodeName == nil || *ep.NodeName != "node-1" {
				t.Errorf("nodeName %v", ep.NodeName)
			}
		})
	}
}

func TestPodIsEndpoint(t *testing.T) {
	cases := []struct {
		name string
		pod  *api.Pod
		want bool
	}{
		{"running with IP", testPod("a", "10.0.0.1", false), true},
		{"no IP", testPod("a", "", true), false},
		{"succeeded", testPod("a", "10.0.0.1", false, phase(api.PodSucceeded)), false},
		{"failed", testPod("a", "10.0.0.1", false, phase(api.PodFailed)), false},
		{"pending with IP", testPod("a", "10.0.0.1", false, phase(api.PodPending)), true},
		{"terminating stays", testPod("a", "10.0.0.1", true, terminating), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := podIsEndpoint(tc.pod); got != tc.want {
				t.Errorf("podIsEndpoint = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEndpointPorts(t *testing.T) {
	named := func(name string, proto api.Protocol) svcOpt {
		return func(s *api.Service) {
			s.Spec.Ports = []api.ServicePort{{Name: "web", Protocol: proto, Port: 80, TargetPort: api.FromString(name)}}
		}
	}
	sidecar := func(p *api.Pod) {
		p.Spec.Containers[0].Ports = nil
		p.Spec.InitContainers = []api.Container{{Name: "side", RestartPolicy: ptr(api.RestartPolicyAlways),
			Ports: []api.ContainerPort{{Name: "http", ContainerPort: 9000, Protocol: api.ProtocolTCP}}}}
	}
	initOnly := func(p *api.Pod) {
		sidecar(p)
		p.Spec.InitContainers[0].RestartPolicy = nil
	}
	cases := []struct {
		name string
		svc  *api.Service
		pod  *api.Pod
		want string // portKey
	}{
		{"number", testService(), testPod("a", "10.0.0.1", true), "http/TCP/8080/"},
		{"unset targetPort is the port", testService(func(s *api.Service) { s.Spec.Ports[0].TargetPort = api.IntOrString{} }),
			testPod("a", "10.0.0.1", true), "http/TCP/80/"},
		{"named port resolves", testService(named("http", api.ProtocolTCP)), testPod("a", "10.0.0.1", true), "web/TCP/8080/"},
		{"named port resolves per pod", testService(named("http", api.ProtocolTCP)), testPod("a", "10.0.0.1", true, containerPort("http", 9090)), "web/TCP/9090/"},
		{"named port missing: left out", testService(named("http", api.ProtocolTCP)), testPod("a", "10.0.0.1", true, containerPort("metrics", 9090)), ""},
		{"named port needs the same protocol", testService(named("http", api.ProtocolUDP)), testPod("a", "10.0.0.1", true), ""},
		{"sidecar init container port", testService(named("http", api.ProtocolTCP)), testPod("a", "10.0.0.1", true, sidecar), "web/TCP/9000/"},
		{"plain init container port ignored", testService(named("http", api.ProtocolTCP)), testPod("a", "10.0.0.1", true, initOnly), ""},
		{"headless without ports", testService(func(s *api.Service) { s.Spec.ClusterIP = api.ClusterIPNone; s.Spec.Ports = nil }),
			testPod("a", "10.0.0.1", true), ""},
		{"two ports, one resolves", testService(func(s *api.Service) {
			s.Spec.Ports = append(s.Spec.Ports, api.ServicePort{Name: "metrics", Protocol: api.ProtocolTCP, Port: 9100, TargetPort: api.FromString("metrics")})
		}), testPod("a", "10.0.0.1", true), "http/TCP/8080/"},
		{"appProtocol kept", testService(func(s *api.Service) { s.Spec.Ports[0].AppProtocol = ptr("h2c") }),
			testPod("a", "10.0.0.1", true), "http/TCP/8080/h2c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := portKey(endpointPorts(tc.svc, tc.pod)); got != tc.want {
				t.Errorf("ports %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAddressTypes(t *testing.T) {
	headless := func(s *api.Service) { s.Spec.ClusterIP, s.Spec.IPFamilies = api.ClusterIPNone, nil }
	cases := []struct {
		name string
		svc  *api.Service
		pods []*api.Pod
		want []string
	}{
		{"ipFamilies IPv4", testService(), nil, []string{"IPv4"}},
		{"ipFamilies dual", testService(func(s *api.Service) { s.Spec.IPFamilies = []string{"IPv6", "IPv4"} }), nil, []string{"IPv6", "IPv4"}},
		{"clusterIP IPv6 without families", testService(func(s *api.Service) { s.Spec.IPFamilies, s.Spec.ClusterIP = nil, "fd00::10" }), nil, []string{"IPv6"}},
		{"headless, IPv4 pods", testService(headless), []*api.Pod{testPod("a", "10.0.0.1", true)}, []string{"IPv4"}},
		{"headless, IPv6 pod", testService(headless), []*api.Pod{testPod("a", "fd00::1", true)}, []string{"IPv4", "IPv6"}},
		{"headless, IPv6 pod that is done", testService(headless), []*api.Pod{testPod("a", "fd00::1", true, phase(api.PodFailed))}, []string{"IPv4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hasIPv6 := false
			for _, p := range tc.pods {
				d := derivePod(p, tc.svc)
				hasIPv6 = hasIPv6 || (d.include && d.hasAddr[famIPv6])
			}
			if got := addressTypes(tc.svc, hasIPv6); !slices.Equal(got, tc.want) {
				t.Errorf("addressTypes = %v, want %v", got, tc.want)
			}
		})
	}
}

// ---- packing and slice life cycle ----

// TestReconcile drives the compute step through named scenarios: each
// builds the existing slices with earlier plans (applied by fakeAPI),
// then checks one plan.
func TestReconcile(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, f *fakeAPI)
	}{
		{"no pods: one empty placeholder slice", func(t *testing.T, f *fakeAPI) {
			plan := f.converge(t, testService(), nil, 0)
			if len(plan.Create) != 1 || len(plan.Update)+len(plan.Delete) != 0 {
				t.Fatalf("plan %d/%d/%d, want one create", len(plan.Create), len(plan.Update), len(plan.Delete))
			}
			p := plan.Create[0]
			if len(p.Endpoints) != 0 || len(p.Ports) != 0 || p.AddressType != api.AddressTypeIPv4 || p.GenerateName != "web-" {
				t.Errorf("placeholder %+v", p)
			}
		}},
		{"250 pods: 3 slices of at most 100", func(t *testing.T, f *fakeAPI) {
			plan := f.converge(t, testService(), manyPods(250), 0)
			if got := sizes(plan.Create); !slices.Equal(got, []int{100, 100, 50}) || len(plan.Update)+len(plan.Delete) != 0 {
				t.Fatalf("created sizes %v, updates %d, deletes %d", got, len(plan.Update), len(plan.Delete))
			}
			s := plan.Create[0]
			if got := portKey(s.Ports); got != "http/TCP/8080/" {
				t.Errorf("ports %q", got)
			}
		}},
		{"first pods replace the placeholder in place", func(t *testing.T, f *fakeAPI) {
			f.converge(t, testService(), nil, 0)
			placeholder := f.list()[0].Name
			plan := f.converge(t, testService(), manyPods(3), 0)
			if len(plan.Create) != 0 || !slices.Equal(names(plan.Update), []string{placeholder}) || len(plan.Delete) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v, want the placeholder %s updated", len(plan.Create), names(plan.Update), names(plan.Delete), placeholder)
			}
			if len(plan.Update[0].Endpoints) != 3 || len(plan.Update[0].Ports) != 1 {
				t.Errorf("updated placeholder %d endpoints %d ports", len(plan.Update[0].Endpoints), len(plan.Update[0].Ports))
			}
		}},
		{"last pod gone: the slice becomes the placeholder", func(t *testing.T, f *fakeAPI) {
			f.converge(t, testService(), manyPods(1), 0)
			name := f.list()[0].Name
			plan := f.converge(t, testService(), nil, 0)
			if !slices.Equal(names(plan.Update), []string{name}) || len(plan.Create)+len(plan.Delete) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
			if len(f.slices[name].Endpoints) != 0 || len(f.slices[name].Ports) != 0 {
				t.Errorf("not a placeholder: %+v", f.slices[name])
			}
		}},
		{"one pod flips Ready: exactly its slice is updated", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(250)
			f.converge(t, testService(), pods, 0)
			holder := f.sliceOf("p0142")
			pods[142] = testPod("p0142", pods[142].Status.PodIP, false)
			plan := f.converge(t, testService(), pods, 0)
			if len(plan.Create)+len(plan.Delete) != 0 || !slices.Equal(names(plan.Update), []string{holder}) {
				t.Fatalf("plan creates %d updates %v deletes %v, want only %s", len(plan.Create), names(plan.Update), names(plan.Delete), holder)
			}
			if ep := f.endpoint("p0142"); ep == nil || *ep.Conditions.Ready || f.sliceOf("p0142") != holder {
				t.Errorf("endpoint after flip %+v in %s", ep, f.sliceOf("p0142"))
			}
			if got := len(f.slices[holder].Endpoints); got != 100 && got != 50 {
				t.Errorf("holder has %d endpoints", got)
			}
		}},
		{"pod gone: only its slice shrinks", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(250)
			f.converge(t, testService(), pods, 0)
			holder := f.sliceOf("p0010")
			plan := f.converge(t, testService(), slices.Delete(slices.Clone(pods), 10, 11), 0)
			if !slices.Equal(names(plan.Update), []string{holder}) || len(plan.Create)+len(plan.Delete) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
			if f.total() != 249 || f.sliceOf("p0010") != "" {
				t.Errorf("total %d, p0010 in %q", f.total(), f.sliceOf("p0010"))
			}
		}},
		{"new pod fills the slice already being changed", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(250)
			f.converge(t, testService(), pods, 0)
			holder := f.sliceOf("p0005") // a full slice of 100
			pods = slices.Delete(slices.Clone(pods), 5, 6)
			pods = append(pods, testPod("new", "10.250.0.1", true))
			plan := f.converge(t, testService(), pods, 0)
			if !slices.Equal(names(plan.Update), []string{holder}) || len(plan.Create)+len(plan.Delete) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v, want only %s", len(plan.Create), names(plan.Update), names(plan.Delete), holder)
			}
			if f.sliceOf("new") != holder || len(f.slices[holder].Endpoints) != 100 {
				t.Errorf("new pod in %q, holder has %d", f.sliceOf("new"), len(f.slices[holder].Endpoints))
			}
		}},
		{"changed slices are filled fullest first", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(200) // two full slices
			f.converge(t, testService(), pods, 0)
			a, b := f.sliceOf("p0000"), f.sliceOf("p0100")
			// a loses 20 (80 left), b loses 50 (50 left), 30 new arrive.
			keep := slices.Concat(pods[20:100], pods[150:200])
			for i := range 30 {
				keep = append(keep, testPod(fmt.Sprintf("q%02d", i), fmt.Sprintf("10.251.0.%d", i+1), true))
			}
			plan := f.converge(t, testService(), keep, 0)
			if len(plan.Create)+len(plan.Delete) != 0 || len(plan.Update) != 2 {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
			if na, nb := len(f.slices[a].Endpoints), len(f.slices[b].Endpoints); na != 100 || nb != 60 {
				t.Errorf("slice sizes %d and %d, want 100 (fullest filled first) and 60", na, nb)
			}
		}},
		{"new pods go into the unchanged slice they fill closest to full", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(250) // 100, 100, 50
			f.converge(t, testService(), pods, 0)
			small := f.sliceOf("p0249")
			var extra []*api.Pod
			for i := range 10 {
				extra = append(extra, testPod(fmt.Sprintf("q%02d", i), fmt.Sprintf("10.251.0.%d", i+1), true))
			}
			plan := f.converge(t, testService(), append(slices.Clone(pods), extra...), 0)
			if !slices.Equal(names(plan.Update), []string{small}) || len(plan.Create)+len(plan.Delete) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v, want only %s", len(plan.Create), names(plan.Update), names(plan.Delete), small)
			}
			if len(f.slices[small].Endpoints) != 60 {
				t.Errorf("slice has %d endpoints, want 60", len(f.slices[small].Endpoints))
			}
		}},
		{"a slice's worth of new pods gets a new slice", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(10)
			f.converge(t, testService(), pods, 0)
			small := f.list()[0].Name
			var extra []*api.Pod
			for i := range 150 {
				extra = append(extra, testPod(fmt.Sprintf("q%03d", i), fmt.Sprintf("10.251.%d.%d", i/200, i%200+1), true))
			}
			plan := f.converge(t, testService(), append(slices.Clone(pods), extra...), 0)
			// 100 go into a new slice; the 50 left fit the existing one.
			if got := sizes(plan.Create); !slices.Equal(got, []int{100}) || !slices.Equal(names(plan.Update), []string{small}) {
				t.Fatalf("created %v, updated %v", got, names(plan.Update))
			}
			if len(f.slices[small].Endpoints) != 60 {
				t.Errorf("small slice has %d endpoints, want 60", len(f.slices[small].Endpoints))
			}
		}},
		{"no rebalancing of sparse slices", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(250)
			f.converge(t, testService(), pods, 0)
			// Drop 90 of the first slice and 40 of the last.
			keep := slices.Concat(pods[90:210])
			plan := f.converge(t, testService(), keep, 0)
			if len(plan.Create) != 0 || len(plan.Delete) != 0 || len(plan.Update) != 2 {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
			if got := sizes(f.list()); !slices.Equal(got, []int{10, 100, 10}) {
				t.Errorf("sizes %v, want [10 100 10] (no merging)", got)
			}
		}},
		{"a slice left empty is deleted", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(250)
			f.converge(t, testService(), pods, 0)
			last := f.sliceOf("p0249")
			plan := f.converge(t, testService(), pods[:200], 0)
			if !slices.Equal(names(plan.Delete), []string{last}) || len(plan.Create)+len(plan.Update) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
		}},
		{"unchanged pods: nothing to write", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(120)
			f.converge(t, testService(), pods, 0)
			if plan := f.reconcile(t, testService(), pods, 0, time.Now()); !plan.Empty() {
				t.Fatalf("plan not empty: %d/%d/%d", len(plan.Create), len(plan.Update), len(plan.Delete))
			}
		}},
		{"max endpoints per slice", func(t *testing.T, f *fakeAPI) {
			plan := f.converge(t, testService(), manyPods(5), 2)
			if got := sizes(plan.Create); !slices.Equal(got, []int{2, 2, 1}) {
				t.Fatalf("sizes %v", got)
			}
		}},
		{"named target port with per-pod values: one slice per port set", func(t *testing.T, f *fakeAPI) {
			svc := testService(func(s *api.Service) { s.Spec.Ports[0].TargetPort = api.FromString("http") })
			pods := []*api.Pod{
				testPod("a", "10.0.0.1", true),
				testPod("b", "10.0.0.2", true, containerPort("http", 9090)),
				testPod("c", "10.0.0.3", true),
				testPod("d", "10.0.0.4", true, containerPort("metrics", 9100)),
			}
			plan := f.converge(t, svc, pods, 0)
			if len(plan.Create) != 3 {
				t.Fatalf("created %d slices, want 3", len(plan.Create))
			}
			got := map[string][]string{}
			for _, s := range f.list() {
				for _, ep := range s.Endpoints {
					got[portKey(s.Ports)] = append(got[portKey(s.Ports)], ep.TargetRef.Name)
				}
			}
			want := map[string][]string{"http/TCP/8080/": {"a", "c"}, "http/TCP/9090/": {"b"}, "": {"d"}}
			if !maps.EqualFunc(got, want, slices.Equal[[]string]) {
				t.Errorf("pods by port set %v, want %v", got, want)
			}
		}},
		{"pod whose port changes moves to the other port set", func(t *testing.T, f *fakeAPI) {
			svc := testService(func(s *api.Service) { s.Spec.Ports[0].TargetPort = api.FromString("http") })
			pods := []*api.Pod{testPod("a", "10.0.0.1", true), testPod("b", "10.0.0.2", true)}
			f.converge(t, svc, pods, 0)
			only := f.list()[0].Name
			pods[1] = testPod("b", "10.0.0.5", true, containerPort("http", 9090))
			plan := f.converge(t, svc, pods, 0)
			if len(plan.Create) != 1 || !slices.Equal(names(plan.Update), []string{only}) {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
		}},
		{"pods without IP or finished are left out", func(t *testing.T, f *fakeAPI) {
			pods := []*api.Pod{
				testPod("a", "10.0.0.1", true),
				testPod("noip", "", true),
				testPod("done", "10.0.0.2", true, phase(api.PodSucceeded)),
				testPod("failed", "10.0.0.3", true, phase(api.PodFailed)),
				testPod("term", "10.0.0.4", true, terminating),
			}
			f.converge(t, testService(), pods, 0)
			if f.total() != 2 || f.sliceOf("a") == "" || f.sliceOf("term") == "" {
				t.Errorf("total %d; a in %q, term in %q", f.total(), f.sliceOf("a"), f.sliceOf("term"))
			}
		}},
		{"dual-stack service: a slice per address type", func(t *testing.T, f *fakeAPI) {
			svc := testService(func(s *api.Service) { s.Spec.IPFamilies = []string{"IPv4", "IPv6"} })
			pods := []*api.Pod{testPod("a", "", true, podIPs("10.0.0.1", "fd00::1")), testPod("b", "10.0.0.2", true)}
			f.converge(t, svc, pods, 0)
			got := map[string]int{}
			for _, s := range f.list() {
				got[s.AddressType] += len(s.Endpoints)
			}
			if got["IPv4"] != 2 || got["IPv6"] != 1 || len(f.slices) != 2 {
				t.Errorf("endpoints by type %v in %d slices", got, len(f.slices))
			}
		}},
		{"headless service gets an IPv6 slice for IPv6 pods", func(t *testing.T, f *fakeAPI) {
			svc := testService(func(s *api.Service) { s.Spec.ClusterIP, s.Spec.IPFamilies = api.ClusterIPNone, nil })
			f.converge(t, svc, []*api.Pod{testPod("a", "fd00::1", true)}, 0)
			types := map[string]int{}
			for _, s := range f.list() {
				types[s.AddressType] = len(s.Endpoints)
				if _, ok := s.Labels[LabelHeadless]; !ok {
					t.Errorf("slice %s lacks the headless label", s.Name)
				}
			}
			if !maps.Equal(types, map[string]int{"IPv4": 0, "IPv6": 1}) {
				t.Errorf("slices by type %v", types)
			}
			// The IPv6 pod goes: its slice goes with the address type.
			plan := f.converge(t, svc, nil, 0)
			if len(plan.Delete) != 1 || plan.Delete[0].AddressType != "IPv6" {
				t.Errorf("deletes %v", names(plan.Delete))
			}
		}},
		{"slice of an older service of the same name is replaced, not reused", func(t *testing.T, f *fakeAPI) {
			// As Kubernetes: a slice owned by another Service UID is being
			// garbage collected and is never rewritten for the new one.
			old := testService(func(s *api.Service) { s.UID = "old-uid" })
			f.converge(t, old, manyPods(3), 0)
			name := f.list()[0].Name
			plan := f.converge(t, testService(), manyPods(3), 0)
			if len(plan.Create) != 1 || len(plan.Update) != 0 || !slices.Equal(names(plan.Delete), []string{name}) {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
			for _, s := range f.list() {
				if ref := api.ControllerRef(&s.ObjectMeta); ref.UID != "svc-uid" || len(s.Endpoints) != 3 {
					t.Errorf("slice %s owner %s, %d endpoints", s.Name, ref.UID, len(s.Endpoints))
				}
			}
		}},
		{"slice of an older service is deleted when nothing needs a new slice", func(t *testing.T, f *fakeAPI) {
			f.converge(t, testService(), manyPods(3), 0)
			keep := f.list()[0].Name
			foreign := api.DeepCopy(f.slices[keep])
			foreign.Name, foreign.UID = "web-old", ""
			foreign.OwnerReferences[0].UID = "old-uid"
			f.put(foreign)
			plan := f.converge(t, testService(), manyPods(3), 0)
			if !slices.Equal(names(plan.Delete), []string{"web-old"}) || len(plan.Create)+len(plan.Update) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
		}},
		{"address type the service dropped is deleted", func(t *testing.T, f *fakeAPI) {
			dual := testService(func(s *api.Service) { s.Spec.IPFamilies = []string{"IPv4", "IPv6"} })
			pods := []*api.Pod{testPod("a", "", true, podIPs("10.0.0.1", "fd00::1"))}
			f.converge(t, dual, pods, 0)
			plan := f.converge(t, testService(), pods, 0)
			if len(plan.Delete) != 1 || plan.Delete[0].AddressType != "IPv6" || len(plan.Create)+len(plan.Update) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
		}},
		{"duplicate endpoint is removed from the second slice", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(2)
			f.converge(t, testService(), pods, 0)
			dup := api.DeepCopy(f.list()[0])
			dup.Name, dup.UID = "web-dup", ""
			f.put(dup)
			plan := f.converge(t, testService(), pods, 0)
			if !slices.Equal(names(plan.Delete), []string{"web-dup"}) || f.total() != 2 {
				t.Fatalf("deletes %v, total %d", names(plan.Delete), f.total())
			}
		}},
		{"service labels are mirrored minus reserved ones", func(t *testing.T, f *fakeAPI) {
			svc := testService(func(s *api.Service) {
				s.Labels = map[string]string{"team": "a", api.LabelServiceName: "evil", api.LabelManagedBy: "evil", LabelHeadless: "x"}
			})
			pods := manyPods(150)
			f.converge(t, svc, pods, 0)
			for _, s := range f.list() {
				want := map[string]string{"team": "a", api.LabelServiceName: "web", api.LabelManagedBy: ControllerName}
				if !maps.Equal(s.Labels, want) {
					t.Errorf("slice %s labels %v, want %v", s.Name, s.Labels, want)
				}
			}
			// A label change on the Service rewrites every slice's labels.
			svc.Labels["team"] = "b"
			plan := f.converge(t, svc, pods, 0)
			if len(plan.Update) != 2 || len(plan.Create)+len(plan.Delete) != 0 {
				t.Fatalf("plan creates %d updates %v deletes %v", len(plan.Create), names(plan.Update), names(plan.Delete))
			}
			for _, s := range f.list() {
				if s.Labels["team"] != "b" {
					t.Errorf("slice %s labels %v", s.Name, s.Labels)
				}
			}
		}},
		{"service being deleted gets no new slices", func(t *testing.T, f *fakeAPI) {
			svc := testService(terminatingService)
			plan := f.reconcile(t, svc, manyPods(3), 0, time.Time{})
			if !plan.Empty() {
				t.Fatalf("plan creates %d", len(plan.Create))
			}
		}},
		{"a pod given twice is one endpoint", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(3)
			f.converge(t, testService(), append(pods, pods[1]), 0)
			if f.total() != 3 {
				t.Errorf("%d endpoints, want 3", f.total())
			}
		}},
		{"a foreign endpoint without a pod is dropped", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(3)
			f.converge(t, testService(), pods, 0)
			s := api.DeepCopy(f.list()[0])
			s.Endpoints = append(s.Endpoints, api.Endpoint{Addresses: []string{"192.168.0.9"}})
			s.Generation++
			f.put(s)
			plan := f.converge(t, testService(), pods, 0)
			if !slices.Equal(names(plan.Update), []string{s.Name}) || f.total() != 3 {
				t.Errorf("updates %v, total %d", names(plan.Update), f.total())
			}
		}},
		{"an endpoint edited by someone else is rewritten", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(3)
			f.converge(t, testService(), pods, 0)
			s := api.DeepCopy(f.list()[0])
			s.Endpoints[1].Conditions.Ready = ptr(false)
			s.Endpoints[2].Zone = ptr("z1")
			f.put(s)
			plan := f.converge(t, testService(), pods, 0)
			if !slices.Equal(names(plan.Update), []string{s.Name}) {
				t.Fatalf("updates %v", names(plan.Update))
			}
			for _, ep := range f.list()[0].Endpoints {
				if !*ep.Conditions.Ready || ep.Zone != nil {
					t.Errorf("endpoint %s not repaired: %+v", ep.TargetRef.Name, ep)
				}
			}
		}},
		{"existing endpoint order is kept and new ones appended", func(t *testing.T, f *fakeAPI) {
			pods := manyPods(3)
			f.converge(t, testService(), pods, 0)
			pods = append([]*api.Pod{testPod("a-first", "10.9.0.1", true)}, pods...)
			f.converge(t, testService(), pods, 0)
			var got []string
			for _, ep := range f.list()[0].Endpoints {
				got = append(got, ep.TargetRef.Name)
			}
			if want := []string{"p0000", "p0001", "p0002", "a-first"}; !slices.Equal(got, want) {
				t.Errorf("order %v, want %v", got, want)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newFakeAPI()) })
	}
}

func terminatingService(s *api.Service) {
	t := api.NewTime(time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC))
	s.DeletionTimestamp = &t
}

func TestReconcileTriggerTime(t *testing.T) {
	when := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	f := newFakeAPI()
	pods := manyPods(150)
	plan := f.reconcile(t, testService(), pods, 0, when)
	for _, s := range plan.Create {
		if got := s.Annotations[AnnotationLastChangeTriggerTime]; got != when.Format(time.RFC3339Nano) {
			t.Errorf("create annotation %q", got)
		}
	}
	f.apply(t, plan)
	// A write without a trigger time removes the annotation.
	pods[0] = testPod("p0000", "10.244.0.1", false)
	plan = f.reconcile(t, testService(), pods, 0, time.Time{})
	if len(plan.Update) != 1 {
		t.Fatalf("updates %d", len(plan.Update))
	}
	if _, ok := plan.Update[0].Annotations[AnnotationLastChangeTriggerTime]; ok {
		t.Errorf("annotation kept: %v", plan.Update[0].Annotations)
	}
	// Slices not written keep whatever they had.
	for _, s := range f.list() {
		if s.Name != plan.Update[0].Name && s.Annotations[AnnotationLastChangeTriggerTime] == "" {
			t.Errorf("unwritten slice %s lost its annotation", s.Name)
		}
	}
}

func TestPortKeyOrderInsensitive(t *testing.T) {
	a := []api.EndpointPort{{Name: ptr("a"), Port: ptr[int32](1), Protocol: ptr(api.ProtocolTCP)}, {Name: ptr("b"), Port: ptr[int32](2)}}
	b := []api.EndpointPort{{Name: ptr("b"), Port: ptr[int32](2), Protocol: ptr(api.ProtocolTCP)}, {Name: ptr("a"), Port: ptr[int32](1)}}
	if portKey(a) != portKey(b) {
		t.Errorf("%q != %q", portKey(a), portKey(b))
	}
	if portKey(nil) != portKey([]api.EndpointPort{}) {
		t.Error("nil and empty ports differ")
	}
	if strings.Contains(portKey(a), "UDP") {
		t.Error("unexpected protocol")
	}
}
