package deployment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/deployment"
	"github.com/skiff-dev/skiff/server/servertest"
)

// legacyRevision is an entry of the skiff.dev/revision-history annotation
// that earlier versions wrote.
type legacyRevision struct {
	Revision    int64               `json:"revision"`
	Hash        string              `json:"hash"`
	ChangeCause string              `json:"changeCause,omitempty"`
	Template    api.PodTemplateSpec `json:"template"`
}

// writeLegacy stores a Deployment as earlier versions left it: its pods
// controlled by the Deployment itself, labeled with pod-template-hash
// (one without, as an adopted orphan was), its revisions in
// skiff.dev/revision-history. perHash maps "current", "old" and "none" to
// pod counts.
func writeLegacy(t *testing.T, c *client.Client, name string, replicas int32, paused bool, perHash map[string]int) (*api.Deployment, []string) {
	t.Helper()
	ctx := context.Background()
	res := api.Resources()
	dInfo, pInfo := api.Lookup(res, "apps/v1", "deployments"), api.Lookup(res, "v1", "pods")
	oldD := newDeployment(name, replicas, "nginx:1")
	if err := c.Create(ctx, dInfo, ns, oldD); err != nil {
		t.Fatal(err)
	}
	oldTmpl := oldD.Spec.Template // as stored, defaults applied
	d := &api.Deployment{}
	for range 10 {
		if err := c.Get(ctx, dInfo, ns, name, d); err != nil {
			t.Fatal(err)
		}
		d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		d.Spec.Paused = paused
		one, zero := api.FromInt32(1), api.FromInt32(0)
		d.Spec.Strategy.RollingUpdate = &api.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &zero}
		err := c.Update(ctx, dInfo, ns, d)
		if client.IsConflict(err) {
			continue // a status write came first: read again
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	cur, old := deployment.TemplateHash(&d.Spec.Template), deployment.TemplateHash(&oldTmpl)
	hist, _ := json.Marshal([]legacyRevision{
		{Revision: 1, Hash: old, ChangeCause: "first", Template: oldTmpl},
		{Revision: 2, Hash: cur, Template: d.Spec.Template},
	})
	d.Annotations = map[string]string{deployment.AnnotationRevision: "2", "skiff.dev/revision-history": string(hist)}
	if err := c.Update(ctx, dInfo, ns, d); err != nil {
		t.Fatal(err)
	}
	var uids []string
	tr := true
	for kind, n := range perHash {
		for i := range n {
			labels := map[string]string{"app": name}
			tmpl := d.Spec.Template
			switch kind {
			case "current":
				labels[deployment.LabelPodTemplateHash] = cur
			case "old":
				labels[deployment.LabelPodTemplateHash] = old
				tmpl = oldTmpl
			}
			p := &api.Pod{
				ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", name, kind, i), Namespace: ns, Labels: labels,
					OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: d.UID,
						Controller: &tr, BlockOwnerDeletion: &tr}}},
				Spec: tmpl.Spec,
			}
			if err := c.Create(ctx, pInfo, ns, p); err != nil {
				t.Fatal(err)
			}
			uids = append(uids, p.UID)
		}
	}
	slices.Sort(uids)
	return d, uids
}

// TestUpgradeAdoptsPodsIntoReplicaSets: a data dir written as earlier
// versions did (Deployments controlling their pods) is opened by a server
// with the new controllers: every pod is kept (same uids, none created),
// now controlled by the ReplicaSet of its template, and the revisions of
// the old annotation become ReplicaSets.
func TestUpgradeAdoptsPodsIntoReplicaSets(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server")
	}
	dir := t.TempDir()
	// Phase 1: no deployment or replicaset controller, so nothing moves.
	ts := servertest.Start(t, servertest.Options{DataDir: dir,
		DisabledControllers: []string{"deployment", "replicaset", "scheduler", "gc"}})
	steady, steadyUIDs := writeLegacy(t, ts.Client(), "steady", 3, false, map[string]int{"current": 2, "none": 1})
	// A paused rollout halfway: 3 of the new template, 1 of the old,
	// replicas 3 + maxSurge 1 = 4, so neither scaling nor rolling moves.
	mid, midUIDs := writeLegacy(t, ts.Client(), "mid", 3, true, map[string]int{"current": 3, "old": 1})
	ts.Stop()

	// Phase 2: the new controllers (no scheduler: the pods stay where
	// they are).
	ts2 := servertest.Start(t, servertest.Options{DataDir: dir, DisabledControllers: []string{"scheduler"}})
	c := ts2.Client()
	e := &env{t: t, ctx: context.Background(), c: c, dInfo: api.Lookup(api.Resources(), "apps/v1", "deployments"),
		pInfo: api.Lookup(api.Resources(), "v1", "pods"), rsInfo: api.Lookup(api.Resources(), "apps/v1", "replicasets")}

	for _, tc := range []struct {
		d    *api.Deployment
		uids []string
		// want: pods per replica set hash ("current", "old").
		current, old int
	}{{steady, steadyUIDs, 3, 0}, {mid, midUIDs, 3, 1}} {
		name := tc.d.Name
		cur := deployment.TemplateHash(&tc.d.Spec.Template)
		e.waitFor(name+": status from its replica sets", 20*time.Second, func() (bool, string) {
			d := e.get(name)
			return d.Status.ObservedGeneration == d.Generation && d.Status.Replicas == int32(tc.current+tc.old) &&
					d.Status.UpdatedReplicas == int32(tc.current),
				fmt.Sprintf("%+v annotations %v", d.Status, d.Annotations)
		})
		// Let the controllers settle; nothing may create or delete a pod.
		time.Sleep(2 * time.Second)
		d := e.get(name)
		if _, ok := d.Annotations["skiff.dev/revision-history"]; ok {
			t.Errorf("%s: the legacy annotation is still there", name)
		}
		if d.Annotations[deployment.AnnotationRevision] != "2" {
			t.Errorf("%s: revision %q, want 2", name, d.Annotations[deployment.AnnotationRevision])
		}
		rss := e.listReplicaSets(name)
		if len(rss) != 2 || rss[1].Name != name+"-"+cur || rss[1].Annotations[deployment.AnnotationRevision] != "2" ||
			rss[0].Annotations[deployment.AnnotationRevision] != "1" || rss[0].Annotations[deployment.AnnotationChangeCause] != "first" ||
			*rss[1].Spec.Replicas != int32(tc.current) || *rss[0].Spec.Replicas != int32(tc.old) {
			t.Fatalf("%s: replica sets %s", name, rsSummary(rss))
		}
		pods := e.listPods(name)
		var uids []string
		owners := map[string]int{}
		for _, p := range pods {
			uids = append(uids, p.UID)
			ref := api.ControllerRef(&p.ObjectMeta)
			if ref == nil || ref.Kind != "ReplicaSet" {
				t.Errorf("%s: pod %s owner %+v", name, p.Name, p.OwnerReferences)
				continue
			}
			owners[ref.Name]++
			want := map[string]string{rss[0].UID: rss[0].Spec.Template.Labels[deployment.LabelPodTemplateHash],
				rss[1].UID: cur}[ref.UID]
			if p.Labels[deployment.LabelPodTemplateHash] != want {
				t.Errorf("%s: pod %s hash %q, want %q", name, p.Name, p.Labels[deployment.LabelPodTemplateHash], want)
			}
		}
		slices.Sort(uids)
		if !slices.Equal(uids, tc.uids) {
			t.Errorf("%s: pods %v, want the same pods %v (none created or deleted)", name, uids, tc.uids)
		}
		if owners[name+"-"+cur] != tc.current || owners[rss[0].Name] != tc.old {
			t.Errorf("%s: owners %v", name, owners)
		}
	}

	// A third start migrates nothing and changes nothing.
	ts2.Restart()
	c = ts2.Client()
	time.Sleep(time.Second)
	e.c = c
	if got := len(e.listReplicaSets("steady")); got != 2 {
		t.Errorf("after another restart %d replica sets", got)
	}
}
