package persistentvolume

import (
	"encoding/json"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func ptr[T any](v T) *T { return &v }

func class(name, provisioner, mode string, def bool) *api.StorageClass {
	sc := &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: name}, Provisioner: provisioner,
		ReclaimPolicy: ptr(api.PersistentVolumeReclaimDelete), VolumeBindingMode: ptr(mode)}
	if def {
		sc.Annotations = map[string]string{api.AnnIsDefaultStorageClass: "true"}
	}
	return sc
}

func claim(name, cls, size string, modes ...string) *api.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []string{api.ReadWriteOnce}
	}
	c := &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name, UID: "uid-" + name, ResourceVersion: "7"},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: modes,
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": api.Quantity(size)}}},
		Status: api.PersistentVolumeClaimStatus{Phase: api.ClaimPending},
	}
	if cls != "-" {
		c.Spec.StorageClassName = ptr(cls)
	}
	api.DefaultPersistentVolumeClaim(c)
	return c
}

func volume(name, cls, size string, modes ...string) *api.PersistentVolume {
	if len(modes) == 0 {
		modes = []string{api.ReadWriteOnce}
	}
	pv := &api.PersistentVolume{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"volume": name}},
		Spec: api.PersistentVolumeSpec{Capacity: api.ResourceList{"storage": api.Quantity(size)}, AccessModes: modes, StorageClassName: cls,
			PersistentVolumeSource: api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: "/data/" + name}}},
		Status: api.PersistentVolumeStatus{Phase: api.VolumeAvailable},
	}
	api.DefaultPersistentVolume(pv)
	return pv
}

func boundTo(pv *api.PersistentVolume, c *api.PersistentVolumeClaim) *api.PersistentVolume {
	pv.Spec.ClaimRef = &api.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, UID: c.UID}
	return pv
}

func state(classes []*api.StorageClass, vols []*api.PersistentVolume, claims ...*api.PersistentVolumeClaim) *State {
	st := &State{Volumes: vols, Claims: map[string]*api.PersistentVolumeClaim{}, Classes: map[string]*api.StorageClass{},
		Nodes: map[string]*api.Node{}, Consumers: map[string]string{}, InUse: map[string]bool{}}
	for _, sc := range classes {
		st.Classes[sc.Name] = sc
	}
	for _, c := range claims {
		st.Claims[claimKey(c)] = c
	}
	return st
}

func reasons(p Plan) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Reason)
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var (
	localPath = class(DefaultClassName, Provisioner, api.VolumeBindingWaitForFirstConsumer, true)
	manual    = class("manual", "kubernetes.io/no-provisioner", api.VolumeBindingImmediate, false)
)

func TestPlanClaim(t *testing.T) {
	for _, tc := range []struct {
		name  string
		claim *api.PersistentVolumeClaim
		st    *State
		check func(t *testing.T, p Plan)
	}{
		{
			name: "claim without class gets the default class", claim: claim("data", "-", "1Gi"),
			st: state([]*api.StorageClass{localPath, manual}, nil),
			check: func(t *testing.T, p Plan) {
				if !p.ClaimSpec || className(p.Claim.Spec.StorageClassName) != DefaultClassName || p.ClaimStatus {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name:  "no default class: the claim waits without a class",
			claim: claim("data", "-", "1Gi"), st: state([]*api.StorageClass{manual}, nil),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() || !sameStrings(reasons(p), []string{"FailedBinding"}) {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "the beta class annotation is not overridden",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", "-", "1Gi")
				c.Annotations = map[string]string{api.AnnBetaStorageClass: "fast"}
				return c
			}(),
			st: state([]*api.StorageClass{localPath}, nil),
			check: func(t *testing.T, p Plan) {
				if p.ClaimSpec || !sameStrings(reasons(p), []string{"ProvisioningFailed"}) {
					t.Fatalf("plan %+v events %v", p, reasons(p))
				}
			},
		},
		{
			name: "immediate: binds the smallest volume that fits", claim: claim("data", "manual", "5Gi"),
			st: state([]*api.StorageClass{manual}, []*api.PersistentVolume{
				volume("big", "manual", "100Gi"), volume("small", "manual", "1Gi"), volume("fit", "manual", "10Gi"),
				volume("other-class", "", "5Gi"),
			}),
			check: func(t *testing.T, p Plan) {
				if p.Volume == nil || p.Volume.Name != "fit" || !p.VolumeSpec || !p.VolumeStatus || p.Volume.Status.Phase != api.VolumeBound {
					t.Fatalf("volume %+v", p.Volume)
				}
				r := p.Volume.Spec.ClaimRef
				if r.Name != "data" || r.Namespace != "default" || r.UID != "uid-data" || p.Volume.Annotations[api.AnnBoundByController] != "yes" {
					t.Fatalf("claimRef %+v annotations %v", r, p.Volume.Annotations)
				}
				c := p.Claim
				if c.Spec.VolumeName != "fit" || c.Status.Phase != api.ClaimBound || c.Status.Capacity["storage"] != "10Gi" ||
					c.Annotations[api.AnnBindCompleted] != "yes" || c.Annotations[api.AnnBoundByController] != "yes" || !p.ClaimSpec || !p.ClaimStatus {
					t.Fatalf("claim %+v", c)
				}
			},
		},
		{
			name: "access modes, volume mode, selector and phase must match",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", "manual", "1Gi", api.ReadWriteMany)
				c.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"volume": "labelled"}}
				return c
			}(),
			st: state([]*api.StorageClass{manual}, []*api.PersistentVolume{
				volume("rwo", "manual", "1Gi"),
				func() *api.PersistentVolume {
					v := volume("block", "manual", "1Gi", api.ReadWriteMany)
					v.Spec.VolumeMode = ptr(api.PersistentVolumeBlock)
					return v
				}(),
				volume("unlabelled", "manual", "1Gi", api.ReadWriteMany),
				func() *api.PersistentVolume {
					v := volume("labelled", "manual", "1Gi", api.ReadWriteMany)
					v.Status.Phase = api.VolumeReleased
					return v
				}(),
			}),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() {
					t.Fatalf("bound: %+v", p.Volume)
				}
			},
		},
		{
			name: "a volume pre-bound to the claim wins, even if not Available", claim: claim("data", "manual", "1Gi"),
			st: state([]*api.StorageClass{manual}, []*api.PersistentVolume{
				volume("a", "manual", "1Gi"),
				func() *api.PersistentVolume {
					v := volume("mine", "manual", "1Gi")
					v.Status.Phase = api.VolumePending
					v.Spec.ClaimRef = &api.ObjectReference{Namespace: "default", Name: "data"}
					return v
				}(),
			}),
			check: func(t *testing.T, p Plan) {
				if p.Volume == nil || p.Volume.Name != "mine" || p.Volume.Annotations[api.AnnBoundByController] != "" {
					t.Fatalf("volume %+v", p.Volume)
				}
			},
		},
		{
			name: "wait for first consumer: no pod yet", claim: claim("data", DefaultClassName, "1Gi"),
			st: state([]*api.StorageClass{localPath}, nil),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() || !sameStrings(reasons(p), []string{"WaitForFirstConsumer"}) {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "wait for first consumer: a scheduled pod selects the node", claim: claim("data", DefaultClassName, "1Gi"),
			st: func() *State {
				st := state([]*api.StorageClass{localPath}, nil)
				st.Consumers["default/data"] = "node-a"
				return st
			}(),
			check: func(t *testing.T, p Plan) {
				if !p.ClaimSpec || p.Claim.Annotations[api.AnnSelectedNode] != "node-a" || p.Create != nil {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "local-path provisions on the selected node",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", DefaultClassName, "2Gi")
				c.Annotations = map[string]string{api.AnnSelectedNode: "node-a"}
				return c
			}(),
			st: func() *State {
				st := state([]*api.StorageClass{localPath}, nil)
				st.Nodes["node-a"] = &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-a",
					Labels: map[string]string{LabelHostname: "node-a"}, Annotations: map[string]string{AnnNodeStorageDir: "/srv/agent/storage"}}}
				return st
			}(),
			check: func(t *testing.T, p Plan) {
				pv := p.Create
				if pv == nil || pv.Name != "pvc-uid-data" {
					t.Fatalf("create %+v", pv)
				}
				if pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != "/srv/agent/storage/pvc-uid-data" || *pv.Spec.HostPath.Type != "DirectoryOrCreate" {
					t.Fatalf("source %+v", pv.Spec.PersistentVolumeSource)
				}
				if pv.Spec.Capacity["storage"] != "2Gi" || pv.Spec.StorageClassName != DefaultClassName || pv.Spec.PersistentVolumeReclaimPolicy != "Delete" ||
					pv.Spec.ClaimRef.UID != "uid-data" || pv.Annotations[api.AnnDynamicallyProvisioned] != Provisioner || pv.Finalizers[0] != CleanupFinalizer {
					t.Fatalf("volume %+v", pv)
				}
				if !api.VolumeNodeAffinityMatches(pv, map[string]string{LabelHostname: "node-a"}, "node-a") ||
					api.VolumeNodeAffinityMatches(pv, map[string]string{LabelHostname: "node-b"}, "node-b") {
					t.Fatal("node affinity does not pin node-a")
				}
				if errs := api.ValidatePersistentVolume(pv); len(errs) > 0 {
					t.Fatalf("provisioned volume invalid: %v", errs)
				}
			},
		},
		{
			name:  "local-path without a node refuses to provision",
			claim: claim("data", "lp-now", "1Gi"),
			st:    state([]*api.StorageClass{class("lp-now", Provisioner, api.VolumeBindingImmediate, false)}, nil),
			check: func(t *testing.T, p Plan) {
				if p.Create != nil || !sameStrings(reasons(p), []string{"ProvisioningFailed"}) {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "the provisioned volume is bound once it exists",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", DefaultClassName, "1Gi")
				c.Annotations = map[string]string{api.AnnSelectedNode: "node-a"}
				return c
			}(),
			st: state([]*api.StorageClass{localPath}, []*api.PersistentVolume{func() *api.PersistentVolume {
				pv := provision(claim("data", DefaultClassName, "1Gi"), localPath, "node-a", nil)
				pv.Status.Phase = api.VolumePending
				return pv
			}()}),
			check: func(t *testing.T, p Plan) {
				if p.Create != nil || p.Volume == nil || p.VolumeSpec || !p.VolumeStatus || p.Claim.Spec.VolumeName != "pvc-uid-data" {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "wait for first consumer: a static volume of another node is not taken",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", "local", "1Gi")
				c.Annotations = map[string]string{api.AnnSelectedNode: "node-b"}
				return c
			}(),
			st: state([]*api.StorageClass{class("local", "kubernetes.io/no-provisioner", api.VolumeBindingWaitForFirstConsumer, false)},
				[]*api.PersistentVolume{func() *api.PersistentVolume {
					v := volume("on-a", "local", "1Gi")
					v.Spec.NodeAffinity = provision(claim("x", "", "1Gi"), localPath, "node-a", nil).Spec.NodeAffinity
					return v
				}()}),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "another provisioner: wait for it", claim: claim("data", "fast", "1Gi"),
			st: state([]*api.StorageClass{class("fast", "k8s.io/minikube-hostpath", api.VolumeBindingImmediate, false)}, nil),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() || !sameStrings(reasons(p), []string{"ExternalProvisioning"}) {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "user-bound claim binds its volume",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", "", "1Gi")
				c.Spec.VolumeName = "static"
				return c
			}(),
			st: state(nil, []*api.PersistentVolume{volume("static", "", "1Gi")}),
			check: func(t *testing.T, p Plan) {
				if !p.VolumeSpec || p.Volume.Spec.ClaimRef.UID != "uid-data" || p.Claim.Annotations[api.AnnBoundByController] != "" ||
					p.Claim.Annotations[api.AnnBindCompleted] != "yes" || p.Claim.Status.Phase != api.ClaimBound {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "user-bound claim to a volume too small",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", "", "10Gi")
				c.Spec.VolumeName = "static"
				return c
			}(),
			st: state(nil, []*api.PersistentVolume{volume("static", "", "1Gi")}),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() || !sameStrings(reasons(p), []string{"VolumeMismatch"}) {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "bound claim whose volume is gone is Lost",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", "", "1Gi")
				c.Spec.VolumeName = "gone"
				c.Annotations = map[string]string{api.AnnBindCompleted: "yes"}
				c.Status.Phase = api.ClaimBound
				return c
			}(),
			st: state(nil, nil),
			check: func(t *testing.T, p Plan) {
				if !p.ClaimStatus || p.Claim.Status.Phase != api.ClaimLost || !sameStrings(reasons(p), []string{"ClaimLost"}) {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "claim naming a volume bound elsewhere waits",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", "", "1Gi")
				c.Spec.VolumeName = "taken"
				return c
			}(),
			st: state(nil, []*api.PersistentVolume{boundTo(volume("taken", "", "1Gi"), claim("other", "", "1Gi"))}),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() || !sameStrings(reasons(p), []string{"FailedBinding"}) {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "a bound pair is left alone",
			claim: func() *api.PersistentVolumeClaim {
				c := claim("data", "", "1Gi")
				c.Spec.VolumeName = "v"
				c.Annotations = map[string]string{api.AnnBindCompleted: "yes"}
				c.Status = api.PersistentVolumeClaimStatus{Phase: api.ClaimBound, AccessModes: []string{api.ReadWriteOnce}, Capacity: api.ResourceList{"storage": "1Gi"}}
				return c
			}(),
			st: func() *State {
				v := boundTo(volume("v", "", "1Gi"), claim("data", "", "1Gi"))
				v.Status.Phase = api.VolumeBound
				return state(nil, []*api.PersistentVolume{v})
			}(),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() || len(p.Events) > 0 {
					t.Fatalf("plan %+v", p)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := api.DeepCopy(tc.claim)
			p := PlanClaim(tc.claim, tc.st)
			tc.check(t, p)
			if got, want := mustJSON(tc.claim), mustJSON(before); got != want {
				t.Fatal("PlanClaim changed its input")
			}
		})
	}
}

func TestPlanVolume(t *testing.T) {
	data := claim("data", "", "1Gi")
	for _, tc := range []struct {
		name  string
		pv    *api.PersistentVolume
		st    *State
		check func(t *testing.T, p Plan)
	}{
		{
			name: "a new unclaimed volume becomes Available",
			pv: func() *api.PersistentVolume {
				v := volume("v", "", "1Gi")
				v.Status.Phase = api.VolumePending
				return v
			}(),
			st: state(nil, nil),
			check: func(t *testing.T, p Plan) {
				if !p.VolumeStatus || p.Volume.Status.Phase != api.VolumeAvailable {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "bound to its claim: Bound", pv: boundTo(volume("v", "", "1Gi"), data),
			st: state(nil, nil, func() *api.PersistentVolumeClaim {
				c := claim("data", "", "1Gi")
				c.Spec.VolumeName = "v"
				return c
			}()),
			check: func(t *testing.T, p Plan) {
				if !p.VolumeStatus || p.Volume.Status.Phase != api.VolumeBound || p.VolumeSpec {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "claim not bound yet: wait for its sync", pv: boundTo(volume("v", "", "1Gi"), data),
			st: state(nil, nil, data),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "claim gone, Retain: Released and kept",
			pv:   boundTo(volume("v", "", "1Gi"), data), st: state(nil, nil),
			check: func(t *testing.T, p Plan) {
				if p.Volume.Status.Phase != api.VolumeReleased || p.DeleteVolume != "" {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "claim recreated with another uid: Released",
			pv:   boundTo(volume("v", "", "1Gi"), data),
			st: state(nil, nil, func() *api.PersistentVolumeClaim {
				c := claim("data", "", "1Gi")
				c.UID = "new"
				return c
			}()),
			check: func(t *testing.T, p Plan) {
				if p.Volume.Status.Phase != api.VolumeReleased {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "claim gone, Delete, provisioned here: deleted",
			pv:   provision(data, localPath, "node-a", nil), st: state(nil, nil),
			check: func(t *testing.T, p Plan) {
				if p.DeleteVolume != "pvc-uid-data" || p.Volume.Status.Phase != api.VolumeReleased {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "claim gone, Delete, static volume: Failed",
			pv: func() *api.PersistentVolume {
				v := boundTo(volume("v", "", "1Gi"), data)
				v.Spec.PersistentVolumeReclaimPolicy = api.PersistentVolumeReclaimDelete
				return v
			}(),
			st: state(nil, nil),
			check: func(t *testing.T, p Plan) {
				if p.DeleteVolume != "" || p.Volume.Status.Phase != api.VolumeFailed || !sameStrings(reasons(p), []string{"VolumeFailedDelete"}) {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "bound by the controller to a claim that went elsewhere: unbound",
			pv: func() *api.PersistentVolume {
				v := boundTo(volume("v", "", "1Gi"), data)
				v.Annotations = map[string]string{api.AnnBoundByController: "yes"}
				v.Status.Phase = api.VolumeBound
				return v
			}(),
			st: state(nil, nil, func() *api.PersistentVolumeClaim {
				c := claim("data", "", "1Gi")
				c.Spec.VolumeName = "other"
				return c
			}()),
			check: func(t *testing.T, p Plan) {
				if !p.VolumeSpec || p.Volume.Spec.ClaimRef != nil || p.Volume.Status.Phase != api.VolumeAvailable {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "pre-bound by the user, claim absent: Available",
			pv: func() *api.PersistentVolume {
				v := volume("v", "", "1Gi")
				v.Status.Phase = api.VolumePending
				v.Spec.ClaimRef = &api.ObjectReference{Namespace: "default", Name: "later"}
				return v
			}(),
			st: state(nil, nil),
			check: func(t *testing.T, p Plan) {
				if p.Volume == nil || p.Volume.Status.Phase != api.VolumeAvailable || p.VolumeSpec {
					t.Fatalf("plan %+v", p)
				}
			},
		},
		{
			name: "a volume being deleted is left to its finalizer",
			pv: func() *api.PersistentVolume {
				v := provision(data, localPath, "node-a", nil)
				v.DeletionTimestamp = &api.Time{}
				return v
			}(),
			st: state(nil, nil),
			check: func(t *testing.T, p Plan) {
				if !p.Empty() {
					t.Fatalf("plan %+v", p)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := mustJSON(tc.pv)
			p := PlanVolume(tc.pv, tc.st)
			tc.check(t, p)
			if mustJSON(tc.pv) != before {
				t.Fatal("PlanVolume changed its input")
			}
		})
	}
}

func TestProtection(t *testing.T) {
	deleted := func(c *api.PersistentVolumeClaim) *api.PersistentVolumeClaim {
		c.DeletionTimestamp = &api.Time{}
		c.Finalizers = []string{"other", PVCProtectionFinalizer}
		return c
	}
	st := state(nil, nil)
	st.InUse["default/used"] = true
	if p := PlanClaim(deleted(claim("used", "", "1Gi")), st); !p.Empty() {
		t.Fatalf("claim in use: %+v", p)
	}
	p := PlanClaim(deleted(claim("free", "", "1Gi")), st)
	if !p.ClaimSpec || len(p.Claim.Finalizers) != 1 || p.Claim.Finalizers[0] != "other" {
		t.Fatalf("free claim: %+v", p)
	}
	vol := func(phase string) *api.PersistentVolume {
		v := volume("v", "", "1Gi")
		v.DeletionTimestamp = &api.Time{}
		v.Finalizers = []string{PVProtectionFinalizer, CleanupFinalizer}
		v.Status.Phase = phase
		return v
	}
	if p := PlanVolume(vol(api.VolumeBound), st); !p.Empty() {
		t.Fatalf("bound volume: %+v", p)
	}
	p = PlanVolume(vol(api.VolumeReleased), st)
	if !p.VolumeSpec || len(p.Volume.Finalizers) != 1 || p.Volume.Finalizers[0] != CleanupFinalizer {
		t.Fatalf("released volume: %+v", p)
	}
}

func TestClaimInUse(t *testing.T) {
	c := claim("data", "", "1Gi")
	pod := func(node, phase string) api.Object {
		return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "p"},
			Spec: api.PodSpec{NodeName: node, Volumes: []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{
				PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}},
			Status: api.PodStatus{Phase: phase}}
	}
	if ClaimInUse([]api.Object{pod("", "Pending"), pod("n", api.PodSucceeded), pod("n", api.PodFailed)}, c) {
		t.Fatal("unscheduled and ended pods count")
	}
	if !ClaimInUse([]api.Object{pod("n", api.PodRunning)}, c) {
		t.Fatal("a running pod does not count")
	}
}

func TestConsumerNode(t *testing.T) {
	c := claim("data", "", "1Gi")
	pod := func(name, node, phase string) api.Object {
		return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name},
			Spec: api.PodSpec{NodeName: node, Volumes: []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{
				PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}},
			Status: api.PodStatus{Phase: phase}}
	}
	if n := ConsumerNode([]api.Object{pod("unscheduled", "", "Pending"), pod("done", "node-x", api.PodSucceeded)}, c); n != "" {
		t.Fatalf("got %q", n)
	}
	if n := ConsumerNode([]api.Object{pod("done", "node-x", api.PodFailed), pod("run", "node-a", api.PodRunning)}, c); n != "node-a" {
		t.Fatalf("got %q", n)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
