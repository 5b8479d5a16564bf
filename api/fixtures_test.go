package api

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api/field"
)

// Valid, defaulted objects that the validation tables mutate.

func validPodSpec() PodSpec {
	s := PodSpec{
		Containers: []Container{{
			Name:  "web",
			Image: "nginx:1.27",
			Ports: []ContainerPort{{Name: "http", ContainerPort: 80}},
			ReadinessProbe: &Probe{ProbeHandler: ProbeHandler{
				HTTPGet: &HTTPGetAction{Port: FromString("http")},
			}},
		}},
	}
	DefaultPodSpec(&s)
	return s
}

func validPod() *Pod {
	p := &Pod{
		ObjectMeta: ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec:       validPodSpec(),
	}
	DefaultPod(p)
	return p
}

func validService() *Service {
	s := &Service{
		ObjectMeta: ObjectMeta{Name: "web", Namespace: "default"},
		Spec: ServiceSpec{
			Selector:   map[string]string{"app": "web"},
			Ports:      []ServicePort{{Name: "http", Port: 80, TargetPort: FromString("http")}},
			ClusterIP:  "10.96.0.10",
			ClusterIPs: []string{"10.96.0.10"},
		},
	}
	DefaultService(s)
	return s
}

func validDeployment() *Deployment {
	d := &Deployment{
		ObjectMeta: ObjectMeta{Name: "web", Namespace: "default"},
		Spec: DeploymentSpec{
			Selector: &LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: PodTemplateSpec{
				ObjectMeta: ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       validPodSpec(),
			},
		},
	}
	DefaultDeployment(d)
	return d
}

func validStatefulSet() *StatefulSet {
	s := &StatefulSet{
		ObjectMeta: ObjectMeta{Name: "db", Namespace: "default"},
		Spec: StatefulSetSpec{
			ServiceName: "db",
			Selector:    &LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: PodTemplateSpec{
				ObjectMeta: ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec:       validPodSpec(),
			},
		},
	}
	DefaultStatefulSet(s)
	return s
}

func validEndpointSlice() *EndpointSlice {
	s := &EndpointSlice{
		ObjectMeta: ObjectMeta{Name: "web-abcde", Namespace: "default", Labels: map[string]string{
			LabelServiceName: "web", LabelManagedBy: "endpointslice-controller.skiff.dev"}},
		AddressType: AddressTypeIPv4,
		Endpoints: []Endpoint{{
			Addresses:  []string{"10.244.1.5"},
			Conditions: EndpointConditions{Ready: ptrTo(true), Serving: ptrTo(true), Terminating: ptrTo(false)},
			NodeName:   ptrTo("node-1"),
			TargetRef:  &ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0", UID: "u1"},
		}},
		Ports: []EndpointPort{{Name: ptrTo("http"), Port: ptrTo[int32](8080)}},
	}
	DefaultEndpointSlice(s)
	return s
}

func validNamespace() *Namespace {
	n := &Namespace{ObjectMeta: ObjectMeta{Name: "team-a"}}
	DefaultNamespace(n)
	return n
}

func validNode() *Node {
	n := &Node{
		ObjectMeta: ObjectMeta{Name: "node-1"},
		Spec:       NodeSpec{PodCIDR: "10.244.1.0/24"},
		Status: NodeStatus{
			Capacity:  ResourceList{"cpu": "2", "memory": "4Gi", "pods": "110"},
			Addresses: []NodeAddress{{Type: NodeInternalIP, Address: "192.168.1.10"}, {Type: NodeHostName, Address: "node-1"}},
		},
	}
	DefaultNode(n)
	return n
}

func validEvent() *Event {
	e := &Event{
		ObjectMeta:     ObjectMeta{Name: "web-0.17a8b2c3d4e5f607", Namespace: "default"},
		InvolvedObject: ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0", UID: "u1", APIVersion: "v1"},
		Reason:         "Scheduled",
		Message:        "Successfully assigned default/web-0 to node-1",
		Source:         EventSource{Component: "default-scheduler"},
		Count:          1,
		Type:           EventTypeNormal,
	}
	DefaultEvent(e)
	return e
}

func validServiceCIDR() *ServiceCIDR {
	return &ServiceCIDR{ObjectMeta: ObjectMeta{Name: DefaultServiceCIDRName}, Spec: ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/16"}}}
}

func validIPAddress() *IPAddress {
	return &IPAddress{
		ObjectMeta: ObjectMeta{Name: "10.96.0.10"},
		Spec:       IPAddressSpec{ParentRef: &ParentReference{Resource: "services", Namespace: "default", Name: "web"}},
	}
}

func validLease() *Lease {
	return &Lease{
		ObjectMeta: ObjectMeta{Name: "node-1", Namespace: "kube-node-lease"},
		Spec:       LeaseSpec{HolderIdentity: ptrTo("node-1"), LeaseDurationSeconds: ptrTo[int32](40)},
	}
}

// errKeys renders each error as "<Type> <field>", e.g.
// "FieldValueInvalid spec.ports[0].port".
func errKeys(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = string(e.Type) + " " + e.Field
	}
	return out
}

// checkErrs fails unless errs are exactly want (in any order).
func checkErrs(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	got := errKeys(errs)
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("errors:\n  got  %q\n  want %q\nfull: %v", got, w, errs)
	}
}

// mustJSON marshals v or fails the test.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
