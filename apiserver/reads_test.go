package apiserver

import "testing"

func TestReadTarget(t *testing.T) {
	pods := &ReadOnly{Group: "metrics.k8s.io", Version: "v1beta1", Kind: "PodMetrics", Namespaced: true}
	nodes := &ReadOnly{Group: "metrics.k8s.io", Version: "v1beta1", Kind: "NodeMetrics"}
	gv := &groupVersion{reads: map[string]*ReadOnly{"pods": pods, "nodes": nodes}}
	for _, tc := range []struct {
		rest          string
		ro            *ReadOnly
		res, ns, name string
	}{
		{rest: "pods", ro: pods, res: "pods"},
		{rest: "namespaces/a/pods", ro: pods, res: "pods", ns: "a"},
		{rest: "namespaces/a/pods/p", ro: pods, res: "pods", ns: "a", name: "p"},
		{rest: "pods/p"}, // a namespaced object needs its namespace
		{rest: "nodes", ro: nodes, res: "nodes"},
		{rest: "nodes/n", ro: nodes, res: "nodes", name: "n"},
		{rest: "namespaces/a/nodes"}, // cluster-scoped
		{rest: "namespaces//pods"},
		{rest: "namespaces/a/pods/p/status"},
		{rest: "services"},
		{rest: "nodes/"},
	} {
		ro, res, ns, name, ok := gv.readTarget(tc.rest)
		if ok != (tc.ro != nil) || ro != tc.ro || res != tc.res || ns != tc.ns || name != tc.name {
			t.Errorf("%q: %v %q %q %q %v", tc.rest, ro, res, ns, name, ok)
		}
	}
}
