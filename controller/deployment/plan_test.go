package deployment

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// dep is a rolling Deployment "web" of image with the given bounds.
func dep(replicas int32, image, surge, unavail string) *api.Deployment {
	limit := int32(10)
	deadline := int32(600)
	return &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default", UID: "d-uid", Generation: 1},
		Spec: api.DeploymentSpec{
			Replicas: &replicas,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: tmpl(image),
			Strategy: api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: intstr(surge), MaxUnavailable: intstr(unavail)}},
			RevisionHistoryLimit:    &limit,
			ProgressDeadlineSeconds: &deadline,
		},
		Status: api.DeploymentStatus{ObservedGeneration: 1},
	}
}

func tmpl(image string) api.PodTemplateSpec {
	return api.PodTemplateSpec{
		ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: image}}},
	}
}

// rsOf is d's ReplicaSet for image: revision rev, spec replicas, avail
// of them available (status.replicas = spec), created rev seconds after t0.
func rsOf(d *api.Deployment, image string, rev int64, replicas, avail int32) *api.ReplicaSet {
	dd := *d
	dd.Spec.Template = tmpl(image)
	rs := newReplicaSet(&dd)
	rs.UID = "rs-" + image
	rs.Name = image // short names in the tests
	rs.ResourceVersion = "7"
	rs.CreationTimestamp = api.NewTime(t0.Add(time.Duration(rev) * time.Second))
	rs.Spec.Replicas = &replicas
	rs.Annotations = map[string]string{AnnotationRevision: strconv.FormatInt(rev, 10)}
	setReplicasAnnotations(rs, replicasOf(d), replicasOf(d)+mustBounds(d).surge)
	rs.Status = api.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: avail, AvailableReplicas: avail}
	return rs
}

func mustBounds(d *api.Deployment) bounds {
	b, err := resolveBounds(d)
	if err != nil {
		panic(err)
	}
	return b
}

// describe renders a plan: "create <image>=n rev=r", "<name> a->b", "delete <name>", "revision=r".
func describe(p Plan) string {
	var out []string
	if p.Create != nil {
		out = append(out, fmt.Sprintf("create %s=%d rev=%s", p.Create.Spec.Template.Spec.Containers[0].Image,
			rsReplicas(p.Create), p.Create.Annotations[AnnotationRevision]))
	}
	for _, u := range p.Updates {
		if to := rsReplicas(u.RS); to != u.From {
			out = append(out, fmt.Sprintf("%s %d->%d", u.RS.Name, u.From, to))
		} else {
			out = append(out, fmt.Sprintf("%s annotations", u.RS.Name))
		}
	}
	for _, rs := range p.Delete {
		out = append(out, "delete "+rs.Name)
	}
	if p.Revision != "" {
		out = append(out, "revision="+p.Revision)
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, "; ")
}

func TestReconcile(t *testing.T) {
	cases := []struct {
		name string
		d    func() *api.Deployment
		rss  func(d *api.Deployment) []*api.ReplicaSet
		// oldPodsRunning for Recreate
		oldPods bool
		want    string
	}{
		{
			name: "new deployment: new replica set with all replicas",
			d:    func() *api.Deployment { return dep(3, "v1", "25%", "25%") },
			want: "create v1=3 rev=1; revision=1",
		},
		{
			name: "template change: new replica set of maxSurge pods",
			d:    func() *api.Deployment { return dep(3, "v2", "1", "0") },
			rss:  func(d *api.Deployment) []*api.ReplicaSet { return []*api.ReplicaSet{rsOf(d, "v1", 1, 3, 3)} },
			want: "create v2=1 rev=2; revision=2",
		},
		{
			name: "new pods not available, maxUnavailable 0: wait",
			d:    func() *api.Deployment { return annotated(dep(3, "v2", "1", "0"), "2") },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				return []*api.ReplicaSet{rsOf(d, "v1", 1, 3, 3), rsOf(d, "v2", 2, 1, 0)}
			},
			want: "nothing",
		},
		{
			name: "new pod available: one old pod goes",
			d:    func() *api.Deployment { return annotated(dep(3, "v2", "1", "0"), "2") },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				return []*api.ReplicaSet{rsOf(d, "v1", 1, 3, 3), rsOf(d, "v2", 2, 1, 1)}
			},
			want: "v1 3->2",
		},
		{
			name: "room under maxSurge: new replica set grows first",
			d:    func() *api.Deployment { return annotated(dep(3, "v2", "1", "0"), "2") },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				return []*api.ReplicaSet{rsOf(d, "v1", 1, 2, 2), rsOf(d, "v2", 2, 1, 1)}
			},
			want: "v2 1->2",
		},
		{
			// The old set's status still counts the pod its scale-down to 3
			// deleted (the ReplicaSet controller writes the status it saw
			// before deleting): available counts at most 3 of its pods, so
			// one old pod goes, not two (4 - 1 would leave 2 + 1 ready < 3).
			name: "stale old status after a scale-down: available capped at spec.replicas",
			d:    func() *api.Deployment { return annotated(dep(4, "v2", "1", "1"), "2") },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				old := rsOf(d, "v1", 1, 3, 4)
				old.Status.Replicas, old.Status.ReadyReplicas = 4, 4
				return []*api.ReplicaSet{old, rsOf(d, "v2", 2, 2, 1)}
			},
			want: "v1 3->2",
		},
		{
			// The old set was scaled to 3 but its status still has 4 pods:
			// growing the new set to 2 now would run 6 > 4 + 1.
			name: "old pods not yet deleted: the new replica set waits within maxSurge",
			d:    func() *api.Deployment { return annotated(dep(4, "v2", "1", "1"), "2") },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				old := rsOf(d, "v1", 1, 3, 3)
				old.Status.Replicas, old.Status.ReadyReplicas, old.Status.AvailableReplicas = 4, 4, 4
				return []*api.ReplicaSet{old, rsOf(d, "v2", 2, 1, 0)}
			},
			want: "nothing",
		},
		{
			name: "maxUnavailable 1, surge 0: old scaled down before any new pod",
			d:    func() *api.Deployment { return dep(4, "v2", "0", "1") },
			rss:  func(d *api.Deployment) []*api.ReplicaSet { return []*api.ReplicaSet{rsOf(d, "v1", 1, 4, 4)} },
			want: "create v2=0 rev=2; v1 4->3; revision=2",
		},
		{
			name: "unhealthy old pods go first, oldest replica set first, within maxScaledDown",
			d:    func() *api.Deployment { return annotated(dep(4, "v3", "0", "1"), "3") },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				// all 6, minAvailable 3, new unavailable 0: maxScaledDown 3.
				return []*api.ReplicaSet{rsOf(d, "v1", 1, 2, 0), rsOf(d, "v2", 2, 2, 2), rsOf(d, "v3", 3, 2, 2)}
			},
			want: "v1 2->0; v2 2->1",
		},
		{
			name: "too many new pods: scaled down to replicas",
			d:    func() *api.Deployment { return annotated(dep(2, "v1", "1", "0"), "1") },
			rss:  func(d *api.Deployment) []*api.ReplicaSet { return []*api.ReplicaSet{rsOf(d, "v1", 1, 2, 2)} },
			want: "nothing",
		},
		{
			name: "complete: old replica sets beyond revisionHistoryLimit deleted, oldest revision first",
			d: func() *api.Deployment {
				d := annotated(dep(2, "v4", "1", "0"), "4")
				one := int32(1)
				d.Spec.RevisionHistoryLimit = &one
				d.Status = api.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}
				return d
			},
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				return []*api.ReplicaSet{rsOf(d, "v1", 1, 0, 0), rsOf(d, "v2", 2, 0, 0), rsOf(d, "v3", 3, 0, 0), rsOf(d, "v4", 4, 2, 2)}
			},
			want: "delete v1; delete v2",
		},
		{
			name: "not complete: nothing cleaned up",
			d: func() *api.Deployment {
				d := annotated(dep(2, "v4", "1", "0"), "4")
				zero := int32(0)
				d.Spec.RevisionHistoryLimit = &zero
				return d
			},
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				return []*api.ReplicaSet{rsOf(d, "v1", 1, 0, 0), rsOf(d, "v4", 4, 2, 1)}
			},
			want: "nothing",
		},
		{
			name: "rollback: the old replica set becomes the newest revision, its old one kept in revision-history",
			d:    func() *api.Deployment { return annotated(dep(2, "v1", "1", "0"), "2") },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				return []*api.ReplicaSet{rsOf(d, "v1", 1, 0, 0), rsOf(d, "v2", 2, 2, 2)}
			},
			want: "v1 0->1; revision=3",
		},
		{
			name: "paused: no new replica set, scaling only",
			d: func() *api.Deployment {
				d := annotated(dep(5, "v2", "1", "0"), "1")
				d.Spec.Paused = true
				return d
			},
			rss:  func(d *api.Deployment) []*api.ReplicaSet { return []*api.ReplicaSet{rsOf(d, "v1", 1, 3, 3)} },
			want: "v1 3->5",
		},
		{
			name: "paused without replica sets: none is created",
			d: func() *api.Deployment {
				d := dep(3, "v1", "1", "0")
				d.Spec.Paused = true
				return d
			},
			want: "nothing",
		},
		{
			name: "scaling event mid-rollout: proportional scaling, leftover to the largest",
			d: func() *api.Deployment {
				d := annotated(dep(10, "v2", "3", "2"), "2")
				d.Status.Replicas = 13
				return d
			},
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				// Annotated for replicas 10 (max 13), now scaled to 15 (max 18: 5 more).
				o, n := rsOf(d, "v1", 1, 8, 8), rsOf(d, "v2", 2, 5, 0)
				for _, rs := range []*api.ReplicaSet{o, n} {
					setReplicasAnnotations(rs, 10, 13)
				}
				d.Spec.Replicas = ptr(int32(15))
				return []*api.ReplicaSet{o, n}
			},
			// v1: round(8*18/13)=11 (+3); v2: round(5*18/13)=7, capped at the 2 left.
			want: "v1 8->11; v2 5->7",
		},
		{
			name: "scaling event with one active replica set: it gets all replicas",
			d:    func() *api.Deployment { return annotated(dep(3, "v1", "1", "0"), "1") },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				rs := rsOf(d, "v1", 1, 5, 5)
				setReplicasAnnotations(rs, 5, 6)
				return []*api.ReplicaSet{rs}
			},
			want: "v1 5->3",
		},
		{
			name: "recreate: old replica sets scaled to 0 first",
			d:    func() *api.Deployment { return recreate(annotated(dep(3, "v2", "", ""), "1")) },
			rss:  func(d *api.Deployment) []*api.ReplicaSet { return []*api.ReplicaSet{rsOf(d, "v1", 1, 3, 3)} },
			want: "v1 3->0",
		},
		{
			name: "recreate: waits while old pods run",
			d:    func() *api.Deployment { return recreate(annotated(dep(3, "v2", "", ""), "1")) },
			rss: func(d *api.Deployment) []*api.ReplicaSet {
				rs := rsOf(d, "v1", 1, 0, 0)
				return []*api.ReplicaSet{rs}
			},
			oldPods: true,
			want:    "nothing",
		},
		{
			name: "recreate: old pods gone, new replica set with all replicas",
			d:    func() *api.Deployment { return recreate(annotated(dep(3, "v2", "", ""), "1")) },
			rss:  func(d *api.Deployment) []*api.ReplicaSet { return []*api.ReplicaSet{rsOf(d, "v1", 1, 0, 0)} },
			want: "create v2=3 rev=2; revision=2",
		},
		{
			name: "being deleted: nothing written",
			d: func() *api.Deployment {
				d := dep(3, "v2", "1", "0")
				now := api.NewTime(t0)
				d.DeletionTimestamp = &now
				return d
			},
			rss:  func(d *api.Deployment) []*api.ReplicaSet { return []*api.ReplicaSet{rsOf(d, "v1", 1, 3, 3)} },
			want: "nothing",
		},
		{
			name: "minReadySeconds and change-cause follow onto the new replica set",
			d: func() *api.Deployment {
				d := annotated(dep(1, "v1", "1", "0"), "1")
				d.Spec.MinReadySeconds = 5
				d.Annotations[AnnotationChangeCause] = "kubectl set image"
				return d
			},
			rss:  func(d *api.Deployment) []*api.ReplicaSet { return []*api.ReplicaSet{rsOf(d, "v1", 1, 1, 1)} },
			want: "v1 annotations",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d()
			var rss []*api.ReplicaSet
			if tc.rss != nil {
				rss = tc.rss(d)
			}
			before := make([]string, len(rss))
			for i, rs := range rss {
				before[i] = mustJSON(t, rs)
			}
			p := Reconcile(Input{Deployment: d, ReplicaSets: rss, OldPodsRunning: tc.oldPods}, mustBounds(d))
			if got := describe(p); got != tc.want {
				t.Errorf("plan = %s\nwant  %s", got, tc.want)
			}
			for i, rs := range rss {
				if mustJSON(t, rs) != before[i] {
					t.Errorf("Reconcile modified its input %s", rs.Name)
				}
			}
		})
	}
}

func annotated(d *api.Deployment, rev string) *api.Deployment {
	d.Annotations = map[string]string{AnnotationRevision: rev}
	return d
}

func recreate(d *api.Deployment) *api.Deployment {
	d.Spec.Strategy = api.DeploymentStrategy{Type: api.RecreateDeploymentStrategyType}
	return d
}

func ptr[T any](v T) *T { return &v }

// TestNewReplicaSet: the name, labels, selector and template of a new
// ReplicaSet, and its owner.
func TestNewReplicaSet(t *testing.T) {
	d := dep(3, "v1", "1", "0")
	d.Annotations = map[string]string{AnnotationChangeCause: "why", annotationLastApplied: "{}", AnnotationRevision: "9"}
	p := Reconcile(Input{Deployment: d}, mustBounds(d))
	rs := p.Create
	hash := TemplateHash(&d.Spec.Template)
	if rs.Name != "web-"+hash || rs.Labels[LabelPodTemplateHash] != hash ||
		rs.Spec.Selector.MatchLabels[LabelPodTemplateHash] != hash || rs.Spec.Selector.MatchLabels["app"] != "web" ||
		rs.Spec.Template.Labels[LabelPodTemplateHash] != hash {
		t.Errorf("new replica set = %s", mustJSON(t, rs))
	}
	if _, ok := d.Spec.Template.Labels[LabelPodTemplateHash]; ok {
		t.Error("the Deployment's template got the hash label")
	}
	if ref := api.ControllerRef(&rs.ObjectMeta); ref == nil || ref.UID != "d-uid" || ref.Kind != "Deployment" || !*ref.BlockOwnerDeletion {
		t.Errorf("owner = %+v", rs.OwnerReferences)
	}
	want := map[string]string{AnnotationChangeCause: "why", AnnotationRevision: "1",
		AnnotationDesiredReplicas: "3", AnnotationMaxReplicas: "4"}
	if mustJSON(t, rs.Annotations) != mustJSON(t, want) {
		t.Errorf("annotations = %v, want %v", rs.Annotations, want)
	}
	if p.Revision != "1" {
		t.Errorf("deployment revision = %q", p.Revision)
	}
	// A collision count changes the hash, as upstream's ComputeHash.
	c := int32(1)
	d.Status.CollisionCount = &c
	if p2 := Reconcile(Input{Deployment: d}, mustBounds(d)); p2.Create.Name == rs.Name {
		t.Error("collisionCount did not change the name")
	}
}

// TestRollbackRevisionHistory: a ReplicaSet that becomes the newest again
// keeps its earlier revisions in deployment.kubernetes.io/revision-history.
func TestRollbackRevisionHistory(t *testing.T) {
	d := annotated(dep(2, "v1", "1", "0"), "4")
	old := rsOf(d, "v1", 3, 0, 0)
	old.Annotations[AnnotationRevisionHistory] = "1"
	p := Reconcile(Input{Deployment: d, ReplicaSets: []*api.ReplicaSet{old, rsOf(d, "v2", 4, 2, 2)}}, mustBounds(d))
	got := p.New.Annotations
	if got[AnnotationRevision] != "5" || got[AnnotationRevisionHistory] != "1,3" || p.Revision != "5" {
		t.Errorf("annotations = %v, deployment revision %q", got, p.Revision)
	}
}

// TestRolloutSimulation runs whole rollouts through Reconcile against a
// simulated ReplicaSet controller for many bounds: each round applies the
// plan (status.replicas follows spec at once, new pods start unavailable),
// then the pods of earlier rounds become available. At every step the
// pods never exceed replicas+maxSurge and available pods never drop below
// replicas-maxUnavailable; the rollout must finish with one replica set.
func TestRolloutSimulation(t *testing.T) {
	surges := []string{"0", "1", "2", "25%", "100%"}
	unavails := []string{"0", "1", "3", "25%", "100%"}
	for _, replicas := range []int32{1, 3, 10} {
		for _, s := range surges {
			for _, u := range unavails {
				if (s == "0" && u == "0") || (s == "0" && u == "25%" && replicas < 4) {
					continue
				}
				t.Run(fmt.Sprintf("replicas=%d/surge=%s/unavail=%s", replicas, s, u), func(t *testing.T) {
					simulate(t, replicas, s, u)
				})
			}
		}
	}
}

func simulate(t *testing.T, replicas int32, surge, unavail string) {
	d := annotated(dep(replicas, "v1", surge, unavail), "1")
	b := mustBounds(d)
	cur := []*api.ReplicaSet{rsOf(d, "v1", 1, replicas, replicas)}
	d.Spec.Template = tmpl("v2")
	for round := 0; round < 200; round++ {
		p := Reconcile(Input{Deployment: d, ReplicaSets: cur}, b)
		if p.Revision != "" {
			d.Annotations[AnnotationRevision] = p.Revision
		}
		next := map[string]*api.ReplicaSet{}
		for _, rs := range cur {
			next[rs.Name] = rs
		}
		if p.Create != nil {
			rs := api.DeepCopy(p.Create)
			rs.Name = "v2"
			rs.CreationTimestamp = api.NewTime(t0.Add(time.Hour))
			next[rs.Name] = rs
		}
		for _, u := range p.Updates {
			next[u.RS.Name] = api.DeepCopy(u.RS)
		}
		for _, rs := range p.Delete {
			delete(next, rs.Name)
		}
		// The ReplicaSet controller: scale-downs take the unavailable pods
		// first and are immediate; created pods start unavailable.
		var total, avail int32
		cur = cur[:0]
		for _, name := range slices.Sorted(maps.Keys(next)) {
			rs := next[name]
			n := rsReplicas(rs)
			rs.Status.AvailableReplicas = min(rs.Status.AvailableReplicas, n)
			rs.Status.Replicas = n
			total += n
			avail += rs.Status.AvailableReplicas
			cur = append(cur, rs)
		}
		if total > replicas+b.surge {
			t.Fatalf("round %d: %d pods, more than %d", round, total, replicas+b.surge)
		}
		if avail < replicas-b.unavailable {
			t.Fatalf("round %d: %d available, fewer than %d", round, avail, replicas-b.unavailable)
		}
		// The node: every pod becomes available one round later.
		for _, rs := range cur {
			rs.Status.AvailableReplicas = rs.Status.Replicas
			rs.Status.ReadyReplicas = rs.Status.Replicas
		}
		st, _ := ComputeStatus(StatusInput{Deployment: d, Bounds: b, Plan: Reconcile(Input{Deployment: d, ReplicaSets: cur}, b), Now: t0})
		if deploymentComplete(d, &st) && len(activeOnly(cur)) == 1 {
			if cur[len(cur)-1].Name != "v2" || rsReplicas(cur[len(cur)-1]) != replicas {
				t.Fatalf("complete with %s", mustJSON(t, cur))
			}
			return
		}
	}
	t.Fatalf("rollout did not finish: %s", mustJSON(t, cur))
}
func intstr(s string) *api.IntOrString {
	v := api.ParseIntOrString(s)
	return &v
}

func TestResolveBounds(t *testing.T) {
	cases := []struct {
		name                  string
		replicas              int32
		strategy              string
		surge, unavail        string
		wantSurge, wantUnavai int32
	}{
		{"numbers", 4, "", "1", "1", 1, 1},
		{"defaults 25% of 4", 4, "", "25%", "25%", 1, 1},
		{"25% of 10: surge rounds up, unavailable down", 10, "", "25%", "25%", 3, 2},
		{"10% of 4: surge 1, unavailable 0", 4, "", "10%", "10%", 1, 0},
		{"both round to 0: unavailable becomes 1", 4, "", "0%", "10%", 0, 1},
		{"unavailable capped at replicas", 2, "", "0", "5", 0, 2},
		{"no replicas: no unavailability", 0, "", "1", "1", 1, 0},
		{"100% surge", 3, "", "100%", "0", 3, 0},
		{"recreate has no bounds", 3, api.RecreateDeploymentStrategyType, "", "", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &api.Deployment{Spec: api.DeploymentSpec{Replicas: &tc.replicas}}
			if tc.strategy != "" {
				d.Spec.Strategy.Type = tc.strategy
			} else {
				d.Spec.Strategy = api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: intstr(tc.surge), MaxUnavailable: intstr(tc.unavail)}}
			}
			b, err := resolveBounds(d)
			if err != nil {
				t.Fatal(err)
			}
			if b.surge != tc.wantSurge || b.unavailable != tc.wantUnavai {
				t.Errorf("bounds = surge %d unavailable %d, want %d %d", b.surge, b.unavailable, tc.wantSurge, tc.wantUnavai)
			}
		})
	}
	d := &api.Deployment{Spec: api.DeploymentSpec{Strategy: api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: intstr("lots")}}}}
	if _, err := resolveBounds(d); err == nil {
		t.Error("a non-percent string resolved")
	}
}
