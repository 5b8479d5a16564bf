package server

import (
	"context"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
)

// fakeVolumes is volumeReader over a map.
type fakeVolumes map[string]*api.PersistentVolume

func (f fakeVolumes) Volume(_ context.Context, name string) (*api.PersistentVolume, bool, error) {
	pv, ok := f[name]
	return pv, ok, nil
}

func pinned(name, node string, claim string) *api.PersistentVolume {
	pv := &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name}}
	if node != "" {
		pv.Spec.NodeAffinity = &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
			MatchExpressions: []api.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: "In", Values: []string{node}}},
		}}}}
	}
	if claim != "" {
		pv.Spec.ClaimRef = &api.ObjectReference{Namespace: "ns", Name: claim}
	}
	return pv
}

func TestAuthorizeNodeVolumes(t *testing.T) {
	g := newNodeGraph(nil)
	g.replace([][]byte{graphPod("mine", `{"nodeName":"n1","volumes":[{"name":"v","persistentVolumeClaim":{"claimName":"data"}}],"containers":[]}`)})
	wide := pinned("wide", "", "")
	wide.Spec.NodeAffinity = &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
		MatchExpressions: []api.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: "In", Values: []string{"n1", "n2"}}},
	}}}}
	z := authorizer{graph: g, volumes: fakeVolumes{
		"on-n1": pinned("on-n1", "n1", ""), "on-n2": pinned("on-n2", "n2", ""),
		"for-data": pinned("for-data", "", "data"), "for-other": pinned("for-other", "", "other"), "wide": wide,
	}}
	for _, tc := range []struct {
		verb, name, sub string
		allowed         bool
	}{
		{"get", "on-n1", "", true},
		{"update", "on-n1", "", true},
		{"patch", "on-n1", "", true},
		{"delete", "on-n1", "", false},
		{"update", "on-n1", "status", false},
		{"get", "on-n2", "", false},
		{"update", "on-n2", "", false},
		{"get", "for-data", "", true},
		{"update", "for-data", "", false},
		{"get", "for-other", "", false},
		{"get", "wide", "", false},
		{"get", "gone", "", true},
		{"update", "gone", "", false},
		{"list", "", "", false},
		{"watch", "", "", false},
	} {
		_, err := z.AuthorizeView(context.Background(), nodeUser("n1"),
			apiserver.Attributes{Verb: tc.verb, Resource: "persistentvolumes", Name: tc.name, Subresource: tc.sub})
		if (err == nil) != tc.allowed {
			t.Errorf("%s %s/%s: err %v, want allowed %v", tc.verb, tc.name, tc.sub, err, tc.allowed)
		}
	}
}
