package statefulset

import (
	"context"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

func withClaims(whenDeleted, whenScaled string) setOpt {
	return func(s *api.StatefulSet) {
		s.Spec.VolumeClaimTemplates = []api.PersistentVolumeClaim{{
			ObjectMeta: api.ObjectMeta{Name: "data", Labels: map[string]string{"tier": "db"}, Annotations: map[string]string{"a": "b"}},
			Spec: api.PersistentVolumeClaimSpec{AccessModes: []string{api.ReadWriteOnce},
				Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": "1Gi"}}},
		}}
		s.Spec.PersistentVolumeClaimRetentionPolicy = &api.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: whenDeleted, WhenScaled: whenScaled}
		s.Spec.Template.Spec.Volumes = []api.Volume{
			{Name: "data", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
			{Name: "config", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
		}
	}
}

func TestNewClaimsAndStorage(t *testing.T) {
	set := testSet(3, withClaims("Retain", "Retain"))
	claims := newClaims(set, 2)
	if len(claims) != 1 {
		t.Fatalf("%d claims", len(claims))
	}
	c := claims[0]
	if c.Name != "data-web-2" || c.Namespace != "ns" || c.Labels["tier"] != "db" || c.Labels["app"] != "web" ||
		c.Annotations["a"] != "b" || c.Spec.Resources.Requests["storage"] != "1Gi" {
		t.Fatalf("claim %+v", c)
	}
	if set.Spec.VolumeClaimTemplates[0].Labels["app"] != "" {
		t.Fatal("newClaims changed the template")
	}
	pod := newPod(set, 2, revA, &set.Spec.Template)
	var names []string
	for _, v := range pod.Spec.Volumes {
		names = append(names, v.Name)
		if v.Name == "data" && (v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "data-web-2" || v.EmptyDir != nil) {
			t.Fatalf("data volume %+v", v)
		}
	}
	if len(names) != 2 || names[0] != "config" || names[1] != "data" {
		t.Fatalf("volumes %v", names)
	}
	if set.Spec.Template.Spec.Volumes[0].EmptyDir == nil {
		t.Fatal("newPod changed the template's volumes")
	}
}

func TestClaimOwners(t *testing.T) {
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web-4", UID: "pod-uid"}}
	other := api.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "cm"}
	for _, tc := range []struct {
		name                string
		whenDeleted, scaled string
		ordinal             int
		have                []api.OwnerReference
		wantSet, wantPod    bool
	}{
		{name: "retain, retain", whenDeleted: "Retain", scaled: "Retain", ordinal: 0},
		{name: "retain, retain drops our refs", whenDeleted: "Retain", scaled: "Retain", ordinal: 4,
			have: []api.OwnerReference{{Kind: "StatefulSet", UID: "set-uid"}, {Kind: "Pod", UID: "pod-uid"}}},
		{name: "delete with the set", whenDeleted: "Delete", scaled: "Retain", ordinal: 0, wantSet: true},
		{name: "delete with the set, scaled down still the set's", whenDeleted: "Delete", scaled: "Retain", ordinal: 4, wantSet: true},
		{name: "delete on scale down, in range: nobody's", whenDeleted: "Retain", scaled: "Delete", ordinal: 1},
		{name: "delete on scale down, condemned: the pod's", whenDeleted: "Retain", scaled: "Delete", ordinal: 4, wantPod: true},
		{name: "delete both, in range: the set's", whenDeleted: "Delete", scaled: "Delete", ordinal: 2,
			have: []api.OwnerReference{{Kind: "Pod", UID: "pod-uid"}}, wantSet: true},
		{name: "delete both, condemned: the pod's only", whenDeleted: "Delete", scaled: "Delete", ordinal: 4,
			have: []api.OwnerReference{{Kind: "StatefulSet", UID: "set-uid"}}, wantPod: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := testSet(3, withClaims(tc.whenDeleted, tc.scaled))
			got := claimOwners(set, pod, tc.ordinal, append(tc.have, other))
			hasSet, hasPod, hasOther := false, false, false
			for _, r := range got {
				switch {
				case r.Kind == "StatefulSet" && r.UID == "set-uid" && r.Name == "web" && r.APIVersion == "apps/v1":
					hasSet = true
				case r.Kind == "Pod" && r.UID == "pod-uid" && r.Name == "web-4":
					hasPod = true
				case r.UID == "cm":
					hasOther = true
				default:
					t.Errorf("unexpected ref %+v", r)
				}
			}
			if hasSet != tc.wantSet || hasPod != tc.wantPod || !hasOther || len(got) != btoi(tc.wantSet)+btoi(tc.wantPod)+1 {
				t.Fatalf("owners %+v", got)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestClaimsOnFakeAPI: claims are created before their pods, and with
// whenScaled Delete a condemned pod owns its claim before it goes, while
// the claims of the remaining pods are nobody's.
func TestClaimsOnFakeAPI(t *testing.T) {
	res := api.Resources()
	setsInfo, podsInfo, claimsInfo := api.Lookup(res, "apps/v1", "statefulsets"), api.Lookup(res, "v1", "pods"), api.Lookup(res, "v1", "persistentvolumeclaims")
	fake := fakeapi.New(res)
	ctx, cancel := context.WithCancel(t.Context())
	if _, err := fake.Create(ctx, api.Lookup(res, "v1", "namespaces"), "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "ns"}}); err != nil {
		t.Fatal(err)
	}
	sets := client.NewInformerFor(fake, setsInfo, client.InformerOptions{})
	pods := client.NewInformerFor(fake, podsInfo, client.InformerOptions{})
	claims := client.NewInformerFor(fake, claimsInfo, client.InformerOptions{})
	ctl := New(Deps{Client: fake.Client(), StatefulSets: sets, Pods: pods, Claims: claims, Recorder: &fakeRecorder{}}, Options{})
	var wg sync.WaitGroup
	for _, inf := range []*client.Informer{sets, pods, claims} {
		wg.Go(func() { _ = inf.Run(ctx) })
	}
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })

	set := testSet(2, parallel, withClaims("Retain", "Delete"))
	set.UID, set.Generation = "", 0
	if err := fake.Client().Create(ctx, setsInfo, "ns", set); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "pods and claims", func() bool {
		for _, n := range []string{"web-0", "web-1"} {
			if _, ok := fake.Meta(podsInfo, "ns", n); !ok {
				return false
			}
			if _, ok := fake.Meta(claimsInfo, "ns", "data-"+n); !ok {
				return false
			}
		}
		return true
	})
	var pod api.Pod
	if err := fake.Client().Get(ctx, podsInfo, "ns", "web-1", &pod); err != nil {
		t.Fatal(err)
	}
	if v := pod.Spec.Volumes; len(v) != 2 || v[1].PersistentVolumeClaim == nil || v[1].PersistentVolumeClaim.ClaimName != "data-web-1" {
		t.Fatalf("pod volumes %+v", v)
	}
	if m, _ := fake.Meta(claimsInfo, "ns", "data-web-1"); len(m.OwnerReferences) != 0 {
		t.Fatalf("in-range claim owned: %+v", m.OwnerReferences)
	}

	// Scale down to 1: web-1 is condemned; its claim is made the pod's
	// before the pod is deleted (the garbage collector then deletes it).
	var cur api.StatefulSet
	if err := fake.Client().Get(ctx, setsInfo, "ns", "web", &cur); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	cur.Spec.Replicas = &one
	if err := fake.Client().Update(ctx, setsInfo, "ns", &cur); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "web-1 gone", func() bool {
		_, ok := fake.Meta(podsInfo, "ns", "web-1")
		return !ok
	})
	m, ok := fake.Meta(claimsInfo, "ns", "data-web-1")
	if !ok || len(m.OwnerReferences) != 1 || m.OwnerReferences[0].Kind != "Pod" || m.OwnerReferences[0].UID != pod.UID {
		t.Fatalf("condemned claim %v owners %+v", ok, m.OwnerReferences)
	}
	if m, _ := fake.Meta(claimsInfo, "ns", "data-web-0"); len(m.OwnerReferences) != 0 {
		t.Fatalf("kept claim owned: %+v", m.OwnerReferences)
	}
}
