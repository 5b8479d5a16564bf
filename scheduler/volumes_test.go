package scheduler

import (
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// objCache is a static Cache of objects by "namespace/name".
type objCache map[string]api.Object

func (objCache) AddEventHandler(client.EventHandler) {}
func (objCache) HasSynced() bool                     { return true }
func (c objCache) Get(ns, name string) (api.Object, bool) {
	o, ok := c[ns+"/"+name]
	return o, ok
}
func (c objCache) List() []api.Object {
	out := make([]api.Object, 0, len(c))
	for _, o := range c {
		out = append(out, o)
	}
	return out
}

func cacheOf(objs ...api.Object) objCache {
	c := objCache{}
	for _, o := range objs {
		m := o.GetObjectMeta()
		c[m.Namespace+"/"+m.Name] = o
	}
	return c
}

func storageClass(name, provisioner, mode string) *api.StorageClass {
	return &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

func pvc(name, class, volume string) *api.PersistentVolumeClaim {
	return &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + name},
		Spec: api.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: volume, AccessModes: []string{api.ReadWriteOnce},
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": "1Gi"}}},
	}
}

// pinnedVolume is a volume whose node affinity admits only node.
func pinnedVolume(name, class, node string) *api.PersistentVolume {
	return &api.PersistentVolume{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.PersistentVolumeSpec{Capacity: api.ResourceList{"storage": "1Gi"}, AccessModes: []string{api.ReadWriteOnce}, StorageClassName: class,
			NodeAffinity: &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
				MatchExpressions: []api.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: "In", Values: []string{node}}},
			}}}}},
		Status: api.PersistentVolumeStatus{Phase: api.VolumeAvailable},
	}
}

func usesClaims(names ...string) func(*api.Pod) {
	return func(p *api.Pod) {
		for _, n := range names {
			p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: n, VolumeSource: api.VolumeSource{
				PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: n}}})
		}
	}
}

func TestVolumeFilter(t *testing.T) {
	classes := cacheOf(
		storageClass("local-path", "skiff.dev/local-path", api.VolumeBindingWaitForFirstConsumer),
		storageClass("now", "skiff.dev/local-path", api.VolumeBindingImmediate),
		storageClass("local", noProvisioner, api.VolumeBindingWaitForFirstConsumer),
	)
	deleting := pvc("deleting", "now", "v-a")
	deleting.DeletionTimestamp = &api.Time{}
	boundB := pinnedVolume("v-b", "local", "b")
	boundB.Spec.ClaimRef = &api.ObjectReference{Namespace: "ns", Name: "other", UID: "x"}
	claims := cacheOf(
		pvc("on-a", "now", "v-a"), pvc("on-b", "now", "v-b-bound"), pvc("lost", "now", "v-missing"),
		pvc("pending-now", "now", ""), pvc("no-class", "", ""), pvc("wffc", "local-path", ""),
		pvc("static", "local", ""), deleting,
	)
	vbb := pinnedVolume("v-b-bound", "now", "b")
	volumes := cacheOf(pinnedVolume("v-a", "now", "a"), vbb, pinnedVolume("static-c", "local", "c"), boundB)
	vc := &volumeCaches{claims: claims, volumes: volumes, classes: classes, list: volumes.List}
	nodes := cacheWith([]*api.Node{node("a"), node("b"), node("c")}, nil)

	for _, tc := range []struct {
		name string
		pod  *api.Pod
		want map[string]string // node -> reason ("" fits)
	}{
		{name: "no claims", pod: pod("p"), want: map[string]string{"a": "", "b": "", "c": ""}},
		{name: "bound volume pinned to a", pod: pod("p", usesClaims("on-a")),
			want: map[string]string{"a": "", "b": reasonVolumeNodeConflict, "c": reasonVolumeNodeConflict}},
		{name: "two bound volumes on different nodes fit nowhere", pod: pod("p", usesClaims("on-a", "on-b")),
			want: map[string]string{"a": reasonVolumeNodeConflict, "b": reasonVolumeNodeConflict, "c": reasonVolumeNodeConflict}},
		{name: "missing claim", pod: pod("p", usesClaims("nope")),
			want: map[string]string{"a": `persistentvolumeclaim "nope" not found`}},
		{name: "claim being deleted", pod: pod("p", usesClaims("deleting")),
			want: map[string]string{"b": `persistentvolumeclaim "deleting" is being deleted`}},
		{name: "bound to a missing volume", pod: pod("p", usesClaims("lost")),
			want: map[string]string{"a": `persistentvolume "v-missing" not found`}},
		{name: "unbound immediate claim", pod: pod("p", usesClaims("pending-now")),
			want: map[string]string{"a": reasonUnboundImmediate, "c": reasonUnboundImmediate}},
		{name: "unbound claim without class", pod: pod("p", usesClaims("no-class")),
			want: map[string]string{"a": reasonUnboundImmediate}},
		{name: "unbound wait-for-consumer claim with a provisioner fits anywhere", pod: pod("p", usesClaims("wffc")),
			want: map[string]string{"a": "", "b": "", "c": ""}},
		{name: "unbound static claim fits where an Available volume is", pod: pod("p", usesClaims("static")),
			want: map[string]string{"a": reasonNoVolumeToBind, "b": reasonNoVolumeToBind, "c": ""}},
		{name: "bound and provisioned claims together", pod: pod("p", usesClaims("wffc", "on-b")),
			want: map[string]string{"a": reasonVolumeNodeConflict, "b": "", "c": reasonVolumeNodeConflict}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := newPodInfo(tc.pod)
			info.volumes = vc.forPod(tc.pod)
			for n, want := range tc.want {
				got := ""
				if why := fits(info, nodes.nodes[n]); len(why) > 0 {
					got = why[0]
				}
				if got != want {
					t.Errorf("node %s: %q, want %q", n, got, want)
				}
			}
		})
	}
	t.Run("without caches the filter is off", func(t *testing.T) {
		var off *volumeCaches
		if chk := off.forPod(pod("p", usesClaims("nope"))); chk != nil || !off.synced() {
			t.Fatalf("check %+v", chk)
		}
	})
	t.Run("the fit error names the volume reason", func(t *testing.T) {
		info := newPodInfo(pod("p", usesClaims("on-a")))
		info.volumes = vc.forPod(pod("p", usesClaims("on-a")))
		d := schedule(info, []*nodeInfo{nodes.nodes["b"], nodes.nodes["c"]}, 0)
		if d.node != nil || d.message() != "0/2 nodes are available: 2 node(s) had volume node affinity conflict." {
			t.Fatalf("decision %+v: %s", d, d.message())
		}
	})
}
