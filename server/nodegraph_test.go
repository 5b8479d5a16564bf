package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/dns/source"
)

// graphPod is a stored pod as JSON: spec is the raw spec object.
func graphPod(name, spec string) []byte {
	return []byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"ns"},"spec":` + spec + `}`)
}

func TestPodEdgesOf(t *testing.T) {
	spec := `{"nodeName":"n1","serviceAccountName":"sa",
		"imagePullSecrets":[{"name":"pull"}],
		"volumes":[
			{"name":"s","secret":{"secretName":"vol-secret"}},
			{"name":"c","configMap":{"name":"vol-cm"}},
			{"name":"p","persistentVolumeClaim":{"claimName":"claim"}},
			{"name":"e","ephemeral":{"volumeClaimTemplate":{}}},
			{"name":"pr","projected":{"sources":[{"secret":{"name":"proj-secret"}},{"configMap":{"name":"proj-cm"}},{"serviceAccountToken":{"path":"t"}}]}},
			{"name":"d","emptyDir":{}}],
		"initContainers":[{"name":"i","envFrom":[{"secretRef":{"name":"init-secret"}}]}],
		"containers":[{"name":"c","env":[
			{"name":"A","value":"x"},
			{"name":"B","valueFrom":{"secretKeyRef":{"name":"env-secret","key":"k"}}},
			{"name":"C","valueFrom":{"configMapKeyRef":{"name":"env-cm","key":"k"}}},
			{"name":"D","valueFrom":{"secretKeyRef":{"name":"env-secret","key":"other"}}}],
			"envFrom":[{"configMapRef":{"name":"from-cm"}}]}],
		"ephemeralContainers":[{"name":"dbg","env":[{"name":"E","valueFrom":{"secretKeyRef":{"name":"debug-secret","key":"k"}}}]}]}`
	key, e, err := podEdgesOf(graphPod("p1", spec))
	if err != nil {
		t.Fatal(err)
	}
	if key != "ns/p1" || e.node != "n1" {
		t.Fatalf("key %q node %q", key, e.node)
	}
	var got []string
	for _, r := range e.refs {
		if r.namespace != "ns" {
			t.Errorf("%v: namespace", r)
		}
		got = append(got, r.resource+"/"+r.name)
	}
	slices.Sort(got)
	want := []string{
		"configmaps/env-cm", "configmaps/from-cm", "configmaps/proj-cm", "configmaps/vol-cm",
		"persistentvolumeclaims/claim", "persistentvolumeclaims/p1-e",
		"secrets/debug-secret", "secrets/env-secret", "secrets/init-secret", "secrets/proj-secret", "secrets/pull", "secrets/vol-secret",
		"serviceaccounts/sa",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("refs\n got %v\nwant %v", got, want)
	}
	// The deprecated serviceAccount counts when serviceAccountName is empty.
	_, e, _ = podEdgesOf(graphPod("p2", `{"nodeName":"n1","serviceAccount":"old","containers":[]}`))
	if len(e.refs) != 1 || e.refs[0] != (objRef{"serviceaccounts", "ns", "old"}) {
		t.Fatalf("deprecated serviceAccount: %v", e.refs)
	}
}

func TestNodeGraphFollowsPods(t *testing.T) {
	g := newNodeGraph(nil)
	sec := func(name string) objRef { return objRef{"secrets", "ns", name} }
	withSecret := func(node, secret string) string {
		return `{"nodeName":"` + node + `","volumes":[{"name":"v","secret":{"secretName":"` + secret + `"}}],"containers":[]}`
	}
	g.replace([][]byte{graphPod("a", withSecret("n1", "shared")), graphPod("b", withSecret("n1", "shared")), graphPod("c", withSecret("n2", "only-n2"))})
	if !g.waitSynced(context.Background()) {
		t.Fatal("not synced after replace")
	}
	check := func(when string, node string, r objRef, want bool) {
		t.Helper()
		if got := g.hasRef(node, r); got != want {
			t.Errorf("%s: hasRef(%s, %v) = %v, want %v", when, node, r, got, want)
		}
	}
	check("start", "n1", sec("shared"), true)
	check("start", "n1", sec("only-n2"), false)
	check("start", "n2", sec("only-n2"), true)
	check("start", "n2", sec("shared"), false)
	check("start", "n1", objRef{"configmaps", "ns", "shared"}, false) // the resource counts
	check("start", "n1", objRef{"secrets", "other-ns", "shared"}, false)

	// Two pods reference "shared": it stays until both are gone.
	if err := g.deletePod(graphPod("a", "{}")); err != nil {
		t.Fatal(err)
	}
	check("one of two deleted", "n1", sec("shared"), true)
	if err := g.deletePod(graphPod("b", "{}")); err != nil {
		t.Fatal(err)
	}
	check("both deleted", "n1", sec("shared"), false)

	// An unbound pod has no edges until it is bound; an update replaces them.
	if err := g.setPod(graphPod("d", withSecret("", "pending"))); err != nil {
		t.Fatal(err)
	}
	check("unbound", "n1", sec("pending"), false)
	if err := g.setPod(graphPod("d", withSecret("n1", "pending"))); err != nil {
		t.Fatal(err)
	}
	check("bound", "n1", sec("pending"), true)
	if err := g.setPod(graphPod("d", withSecret("n2", "pending"))); err != nil {
		t.Fatal(err)
	}
	check("moved", "n1", sec("pending"), false)
	check("moved", "n2", sec("pending"), true)

	// A relist replaces everything.
	g.replace(nil)
	check("relist", "n2", sec("only-n2"), false)
	if len(g.pods) != 0 || len(g.refs) != 0 {
		t.Fatalf("left after an empty relist: %v %v", g.pods, g.refs)
	}
}

func TestNodeGraphWaitsForSync(t *testing.T) {
	g := newNodeGraph(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if g.waitSynced(ctx) {
		t.Fatal("synced before any list")
	}
	z := authorizer{graph: g}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err := z.AuthorizeView(ctx2, nodeUser("n1"), apiserver.Attributes{Verb: "get", Resource: "secrets", Namespace: "ns", Name: "s"})
	if se, ok := err.(*apiserver.StatusError); !ok || se.Status().Code != 503 {
		t.Fatalf("before the first list: %v, want 503", err)
	}
}

// fakePods is podNodes over a map "ns/name" -> node.
type fakePods map[string]string

func (f fakePods) PodNodeName(_ context.Context, ns, name string) (string, bool, error) {
	n, ok := f[ns+"/"+name]
	return n, ok, nil
}

func TestAuthorizerNodeRules(t *testing.T) {
	g := newNodeGraph(nil)
	g.replace([][]byte{graphPod("mine", `{"nodeName":"n1","volumes":[{"name":"v","secret":{"secretName":"s1"}}],"containers":[]}`)})
	z := authorizer{pods: fakePods{"ns/mine": "n1", "ns/theirs": "n2"}, graph: g}
	sel := func(s string) fields.Selector {
		f, err := fields.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	pods := func(verb, name, sub string) apiserver.Attributes {
		return apiserver.Attributes{Verb: verb, Resource: "pods", Namespace: "ns", Name: name, Subresource: sub}
	}
	type want int
	const (
		deny want = iota
		whole
		viewed
	)
	cases := []struct {
		name string
		a    apiserver.Attributes
		want want
	}{
		{"get own pod", pods("get", "mine", ""), whole},
		{"get own pod status", pods("get", "mine", "status"), whole},
		{"get another's pod", pods("get", "theirs", ""), deny},
		{"get a missing pod", pods("get", "nope", ""), deny},
		{"own pod's log", pods("get", "mine", "log"), deny},
		{"list with its selector", apiserver.Attributes{Verb: "list", Resource: "pods", FieldSelector: sel("spec.nodeName=n1")}, whole},
		{"watch with its selector and more", apiserver.Attributes{Verb: "watch", Resource: "pods", FieldSelector: sel("status.phase=Running,spec.nodeName=n1")}, whole},
		{"list with != its name", apiserver.Attributes{Verb: "list", Resource: "pods", FieldSelector: sel("spec.nodeName!=n1")}, viewed},
		{"list with another's selector", apiserver.Attributes{Verb: "list", Resource: "pods", FieldSelector: sel("spec.nodeName=n2")}, viewed},
		{"list without selector", apiserver.Attributes{Verb: "list", Resource: "pods"}, viewed},
		{"update own pod status", pods("update", "mine", "status"), whole},
		{"update another's pod status", pods("patch", "theirs", "status"), deny},
		{"delete a missing pod (its 404)", pods("delete", "nope", ""), whole},
		{"get its pod's secret", apiserver.Attributes{Verb: "get", Resource: "secrets", Namespace: "ns", Name: "s1"}, whole},
		{"get another secret", apiserver.Attributes{Verb: "get", Resource: "secrets", Namespace: "ns", Name: "s2"}, deny},
		{"get its secret in another namespace", apiserver.Attributes{Verb: "get", Resource: "secrets", Namespace: "other", Name: "s1"}, deny},
		{"list secrets", apiserver.Attributes{Verb: "list", Resource: "secrets", Namespace: "ns"}, deny},
		{"update its secret", apiserver.Attributes{Verb: "update", Resource: "secrets", Namespace: "ns", Name: "s1"}, deny},
		{"list services", apiserver.Attributes{Verb: "list", Resource: "services"}, whole},
		{"discovery", apiserver.Attributes{Verb: "get", Path: "/apis/apps/v1"}, whole},
		{"openapi", apiserver.Attributes{Verb: "get", Path: "/openapi/v3/api/v1"}, whole},
		{"metrics", apiserver.Attributes{Verb: "get", Path: "/metrics"}, deny},
		{"post to discovery", apiserver.Attributes{Verb: "post", Path: "/api"}, deny},
		{"a path outside", apiserver.Attributes{Verb: "get", Path: "/apiary"}, deny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := z.AuthorizeView(context.Background(), nodeUser("n1"), tc.a)
			got := whole
			switch {
			case err != nil:
				got = deny
			case v != nil:
				got = viewed
			}
			if got != tc.want {
				t.Fatalf("got %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}

func TestAuthorizerOtherUsers(t *testing.T) {
	z := authorizer{}
	join := apiserver.User{Name: userBootstrap, Groups: []string{groupBootstr}}
	dash := apiserver.User{Name: userDashboard, Groups: []string{groupReadOnly}}
	admin := apiserver.User{Name: userAdmin, Groups: []string{groupMasters}}
	cases := []struct {
		who  apiserver.User
		a    apiserver.Attributes
		deny bool
	}{
		{join, apiserver.Attributes{Verb: "get", Path: "/api"}, true},
		{join, apiserver.Attributes{Verb: "get", Path: "/metrics"}, true},
		{join, apiserver.Attributes{Verb: "get", Path: "/version"}, false},
		{join, apiserver.Attributes{Verb: "get", Path: "/healthz"}, false},
		{join, apiserver.Attributes{Verb: "list", Resource: "services"}, true},
		{dash, apiserver.Attributes{Verb: "get", Path: "/openapi/v2"}, false},
		{dash, apiserver.Attributes{Verb: "get", Path: "/metrics"}, true},
		{dash, apiserver.Attributes{Verb: "list", Resource: "pods"}, false},
		{dash, apiserver.Attributes{Verb: "get", Resource: "configmaps", Namespace: "ns", Name: "c"}, false},
		{dash, apiserver.Attributes{Verb: "get", Resource: "secrets", Namespace: "ns", Name: "s"}, true},
		{dash, apiserver.Attributes{Verb: "create", Resource: "services", Namespace: "ns"}, true},
		{admin, apiserver.Attributes{Verb: "get", Path: "/metrics"}, false},
		{admin, apiserver.Attributes{Verb: "get", Resource: "secrets", Namespace: "ns", Name: "s"}, false},
	}
	for _, tc := range cases {
		v, err := z.AuthorizeView(context.Background(), tc.who, tc.a)
		if (err != nil) != tc.deny || v != nil {
			t.Errorf("%s %+v: err %v view %v, want deny=%v", tc.who.Name, tc.a, err, v != nil, tc.deny)
		}
	}
}

func TestPodAddressView(t *testing.T) {
	in := `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","uid":"u1","resourceVersion":"7",
		"creationTimestamp":"2024-01-01T00:00:00Z","deletionTimestamp":"2024-01-02T00:00:00Z",
		"labels":{"app":"x"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"secret\":1}"}},
		"spec":{"nodeName":"n2","containers":[{"name":"c","image":"img","env":[{"name":"TOKEN","value":"hunter2"}]}]},
		"status":{"phase":"Running","podIP":"10.244.1.5","podIPs":[{"ip":"10.244.1.5"}],"hostIP":"192.0.2.1"}}`
	out, err := podAddressView([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"hunter2", "img", "last-applied", "app", "hostIP"} {
		if strings.Contains(string(out), gone) {
			t.Errorf("the view keeps %q: %s", gone, out)
		}
	}
	var p api.Pod
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "Pod" || p.Name != "p" || p.Namespace != "ns" || p.UID != "u1" || p.ResourceVersion != "7" ||
		p.DeletionTimestamp == nil || p.Spec.NodeName != "n2" || p.Status.Phase != api.PodRunning ||
		p.Status.PodIP != "10.244.1.5" || len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != "10.244.1.5" {
		t.Fatalf("the view lost what the node DNS reads: %s", out)
	}
	// What the node DNS makes of it (dns/source), once not being deleted.
	p.DeletionTimestamp = nil
	if d, ok := source.PodFrom(&p); !ok || d.Name != "p" || d.Namespace != "ns" || len(d.IPs) != 1 || d.IPs[0].String() != "10.244.1.5" {
		t.Fatalf("dns/source.PodFrom(view) = %+v, %v", d, ok)
	}
}
