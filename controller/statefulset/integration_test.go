package statefulset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/statefulset"
)

// checkOrderedCreation checks, over a history, that each pod of set is
// created once and only while the pod before it is Running and Ready.
func checkOrderedCreation(t *testing.T, set string, n int, evs []hEvent) {
	t.Helper()
	ready := map[string]bool{}
	readyAt := map[string]hEvent{}
	added := map[string]int{}
	for _, ev := range evs {
		switch ev.typ {
		case "ADDED":
			added[ev.name]++
			for i := 1; i < n; i++ {
				if ev.name != fmt.Sprintf("%s-%d", set, i) {
					continue
				}
				prev := fmt.Sprintf("%s-%d", set, i-1)
				if !ready[prev] {
					t.Errorf("%s created (rv %d) while %s was not Running and Ready", ev.name, ev.rv, prev)
				} else {
					t.Logf("%s created %v after %s became Ready (rv %d -> %d)", ev.name, ev.at.Sub(readyAt[prev].at), prev, readyAt[prev].rv, ev.rv)
				}
			}
		case "DELETED":
			ready[ev.name] = false
			continue
		}
		if ev.ready && !ready[ev.name] {
			readyAt[ev.name] = ev
		}
		ready[ev.name] = ev.ready && !ev.terminating
	}
	for i := range n {
		name := fmt.Sprintf("%s-%d", set, i)
		if added[name] != 1 {
			t.Errorf("%s created %d times, want once", name, added[name])
		}
	}
}

// terminationOrder lists, for the pods that were deleted in evs, the order
// in which they started terminating (or were deleted outright), and checks
// that each began only after the previous one was gone when sequential.
func terminationOrder(t *testing.T, evs []hEvent, sequential bool) []string {
	t.Helper()
	var order []string
	started := map[string]bool{}
	gone := map[string]bool{}
	for _, ev := range evs {
		if (ev.terminating || ev.typ == "DELETED") && !started[ev.uid] {
			started[ev.uid] = true
			if sequential && len(order) > 0 && !gone[order[len(order)-1]] {
				t.Errorf("%s started terminating (rv %d) before %s was gone", ev.name, ev.rv, order[len(order)-1])
			}
			order = append(order, ev.name)
		}
		if ev.typ == "DELETED" {
			gone[ev.name] = true
		}
	}
	return order
}

func TestOrderedReadyLifecycle(t *testing.T) {
	e := startEnv(t)

	// Scale up: web-0, web-1, web-2 in order, each after the one before is Ready.
	mark := e.history.len()
	e.createSet("web", 3, nil)
	e.waitFor("web-0..2 Running and Ready", func() bool { return e.readyPods("web-0", "web-1", "web-2") })
	checkOrderedCreation(t, "web", 3, e.history.since(mark))

	set := e.getSet("web")
	pods := e.pods()
	for i := range 3 {
		name := fmt.Sprintf("web-%d", i)
		p := pods[name]
		if p.Spec.Hostname != name || p.Spec.Subdomain != "nginx" {
			t.Errorf("%s: hostname %q subdomain %q, want %q nginx", name, p.Spec.Hostname, p.Spec.Subdomain, name)
		}
		if p.Labels["app"] != "web" || p.Labels[statefulset.PodNameLabel] != name || p.Labels[statefulset.PodIndexLabel] != fmt.Sprint(i) ||
			!strings.HasPrefix(p.Labels[statefulset.RevisionLabel], "web-") {
			t.Errorf("%s: labels %v", name, p.Labels)
		}
		ref := api.ControllerRef(&p.ObjectMeta)
		if ref == nil || ref.UID != set.UID || ref.Kind != "StatefulSet" || ref.Name != "web" {
			t.Errorf("%s: controller ref %+v, want the set (uid %s)", name, ref, set.UID)
		}
		if !e.hasEvent(statefulset.EventSuccessfulCreate, fmt.Sprintf("create Pod %s in StatefulSet web successful", name)) {
			// Events are written asynchronously.
			e.waitFor("SuccessfulCreate event of "+name, func() bool {
				return e.hasEvent(statefulset.EventSuccessfulCreate, fmt.Sprintf("create Pod %s in StatefulSet web successful", name))
			})
		}
	}
	rev := pods["web-0"].Labels[statefulset.RevisionLabel]
	e.waitFor("status of 3 ready replicas", func() bool {
		s := e.getSet("web").Status
		return s.Replicas == 3 && s.ReadyReplicas == 3 && s.AvailableReplicas == 3 && s.CurrentReplicas == 3 &&
			s.UpdatedReplicas == 3 && s.CurrentRevision == rev && s.UpdateRevision == rev && s.ObservedGeneration == set.Generation
	})

	// Scale down 3 -> 1: web-2 goes first, web-1 only once web-2 is gone.
	mark = e.history.len()
	e.patchSet("web", `{"spec":{"replicas":1}}`)
	e.waitFor("only web-0 left", func() bool { return e.readyPods("web-0") })
	order := terminationOrder(t, e.history.since(mark), true)
	if strings.Join(order, ",") != "web-2,web-1" {
		t.Errorf("scale-down order %v, want [web-2 web-1]", order)
	}
	for _, name := range []string{"web-2", "web-1"} {
		msg := fmt.Sprintf("delete Pod %s in StatefulSet web successful", name)
		e.waitFor("SuccessfulDelete event of "+name, func() bool { return e.hasEvent(statefulset.EventSuccessfulDelete, msg) })
	}
	e.waitFor("status of 1 replica", func() bool {
		s := e.getSet("web").Status
		return s.Replicas == 1 && s.ReadyReplicas == 1 && s.ObservedGeneration == e.getSet("web").Generation
	})

	// A deleted pod comes back with the same name.
	old := e.pods()["web-0"]
	if err := e.c.Delete(context.Background(), podsInfo, ns, "web-0", clientDeleteDefault()); err != nil {
		t.Fatalf("delete web-0: %v", err)
	}
	e.waitFor("web-0 recreated", func() bool {
		p, ok := e.pods()["web-0"]
		return ok && p.UID != old.UID && e.readyPods("web-0")
	})
	if p := e.pods()["web-0"]; p.Spec.Hostname != "web-0" || p.Spec.Subdomain != "nginx" {
		t.Errorf("recreated web-0: hostname %q subdomain %q", p.Spec.Hostname, p.Spec.Subdomain)
	}

	// A failed pod is replaced with the same name.
	old = e.pods()["web-0"]
	failed := *old
	failed.Status.Phase = api.PodFailed
	if err := e.c.UpdateStatus(context.Background(), podsInfo, ns, &failed); err != nil {
		t.Fatalf("fail web-0: %v", err)
	}
	e.waitFor("failed web-0 replaced", func() bool {
		p, ok := e.pods()["web-0"]
		return ok && p.UID != old.UID && e.readyPods("web-0")
	})
	e.waitFor("RecreatingFailedPod event", func() bool {
		return e.hasEvent(statefulset.EventRecreatingFailedPod, "StatefulSet default/web is recreating failed Pod web-0")
	})
}

func TestRollingUpdate(t *testing.T) {
	e := startEnv(t)
	e.createSet("web", 3, nil)
	e.waitFor("3 ready pods", func() bool { return e.readyPods("web-0", "web-1", "web-2") })
	rev1 := e.pods()["web-0"].Labels[statefulset.RevisionLabel]

	// Change the template: pods are replaced from web-2 down, one at a
	// time, each once the one above is back and Ready.
	mark := e.history.len()
	e.patchSet("web", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}`)
	var rev2 string
	e.waitFor("a new update revision", func() bool {
		rev2 = e.getSet("web").Status.UpdateRevision
		return rev2 != "" && rev2 != rev1
	})
	updated := func(rev string, names ...string) bool {
		if !e.readyPods("web-0", "web-1", "web-2") {
			return false
		}
		pods := e.pods()
		for _, n := range names {
			if pods[n].Labels[statefulset.RevisionLabel] != rev {
				return false
			}
		}
		return true
	}
	e.waitFor("every pod at the new revision", func() bool { return updated(rev2, "web-0", "web-1", "web-2") })
	evs := e.history.since(mark)
	if order := terminationOrder(t, evs, true); strings.Join(order, ",") != "web-2,web-1,web-0" {
		t.Errorf("update order %v, want [web-2 web-1 web-0]", order)
	}
	// Each replacement starts only once the pod replaced before it is
	// back at the new revision and Ready.
	readyNew := map[string]bool{}
	for _, ev := range evs {
		if ev.terminating && ev.revision == rev1 {
			for _, above := range map[string][]string{"web-1": {"web-2"}, "web-0": {"web-2", "web-1"}}[ev.name] {
				if !readyNew[above] {
					t.Errorf("%s replaced (rv %d) before %s was Ready at the new revision", ev.name, ev.rv, above)
				}
			}
		}
		if ev.revision == rev2 {
			readyNew[ev.name] = ev.ready && !ev.terminating
		}
	}
	if p := e.pods()["web-1"]; p.Spec.Containers[0].Image != "nginx:1.28" {
		t.Errorf("web-1 image %s after the update", p.Spec.Containers[0].Image)
	}
	e.waitFor("rollout complete in status", func() bool {
		s := e.getSet("web").Status
		return s.CurrentRevision == rev2 && s.UpdateRevision == rev2 && s.UpdatedReplicas == 3 && s.CurrentReplicas == 3 && s.ReadyReplicas == 3
	})

	// With partition 2 only web-2 moves to the next revision.
	mark = e.history.len()
	e.patchSet("web", `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}},"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.29"}]}}}}`)
	var rev3 string
	e.waitFor("a third update revision", func() bool {
		rev3 = e.getSet("web").Status.UpdateRevision
		return rev3 != "" && rev3 != rev2
	})
	e.waitFor("web-2 at the third revision", func() bool { return updated(rev3, "web-2") })
	e.waitFor("partitioned status", func() bool {
		s := e.getSet("web").Status
		return s.CurrentRevision == rev2 && s.UpdateRevision == rev3 && s.UpdatedReplicas == 1 && s.CurrentReplicas == 2 && s.ReadyReplicas == 3
	})
	pods := e.pods()
	for _, n := range []string{"web-0", "web-1"} {
		if got := pods[n].Labels[statefulset.RevisionLabel]; got != rev2 {
			t.Errorf("%s at revision %s, want %s (below the partition)", n, got, rev2)
		}
	}
	if order := terminationOrder(t, e.history.since(mark), true); strings.Join(order, ",") != "web-2" {
		t.Errorf("pods replaced with partition 2: %v, want [web-2]", order)
	}

	// A pod below the partition that is deleted comes back at the current
	// revision (its template recovered from its sibling).
	old := pods["web-0"]
	if err := e.c.Delete(context.Background(), podsInfo, ns, "web-0", clientDeleteDefault()); err != nil {
		t.Fatalf("delete web-0: %v", err)
	}
	e.waitFor("web-0 back", func() bool {
		p, ok := e.pods()["web-0"]
		return ok && p.UID != old.UID && e.readyPods("web-0", "web-1", "web-2")
	})
	if p := e.pods()["web-0"]; p.Labels[statefulset.RevisionLabel] != rev2 || p.Spec.Containers[0].Image != "nginx:1.28" {
		t.Errorf("recreated web-0 at revision %s image %s, want %s nginx:1.28", p.Labels[statefulset.RevisionLabel], p.Spec.Containers[0].Image, rev2)
	}
}

func TestParallel(t *testing.T) {
	e := startEnv(t)
	e.node.autoReady.Store(false) // pods stay Running, never Ready

	mark := e.history.len()
	e.createSet("par", 3, func(s *api.StatefulSet) { s.Spec.PodManagementPolicy = api.ParallelPodManagement })
	e.waitFor("3 pods Running without any being Ready", func() bool {
		pods := e.pods()
		for _, n := range []string{"par-0", "par-1", "par-2"} {
			if p := pods[n]; p == nil || p.Status.Phase != api.PodRunning {
				return false
			}
		}
		return len(pods) == 3
	})
	for _, ev := range e.history.since(mark) {
		if ev.ready {
			t.Fatalf("a pod became ready: %v", ev)
		}
	}
	e.waitFor("status of 3 unready replicas", func() bool {
		s := e.getSet("par").Status
		return s.Replicas == 3 && s.ReadyReplicas == 0
	})

	// Scale to 0: all are deleted at once, none waiting for another.
	mark = e.history.len()
	e.patchSet("par", `{"spec":{"replicas":0}}`)
	e.waitFor("no pods", func() bool { return len(e.pods()) == 0 })
	evs := e.history.since(mark)
	order := terminationOrder(t, evs, false)
	if len(order) != 3 {
		t.Fatalf("terminated %v, want all 3", order)
	}
	firstGone := -1
	for i, ev := range evs {
		if ev.typ == "DELETED" {
			firstGone = i
			break
		}
	}
	started := map[string]bool{}
	for _, ev := range evs[:firstGone] {
		if ev.terminating {
			started[ev.name] = true
		}
	}
	if len(started) != 3 {
		t.Errorf("only %v were terminating before the first pod was gone; Parallel deletes all at once", started)
	}
	e.waitFor("status of 0 replicas", func() bool { return e.getSet("par").Status.Replicas == 0 })
}

// revisionsOf are set's ControllerRevisions, oldest first, as
// "<name>:<revision>".
func (e *env) revisionsOf(set string) []string {
	e.t.Helper()
	var list api.ControllerRevisionList
	if err := e.c.List(context.Background(), revsInfo, ns, client.ListOptions{}, &list); err != nil {
		e.t.Fatal(err)
	}
	uid := e.getSet(set).UID
	slices.SortFunc(list.Items, func(a, b api.ControllerRevision) int { return int(a.Revision - b.Revision) })
	var out []string
	for _, r := range list.Items {
		if ref := api.ControllerRef(&r.ObjectMeta); ref != nil && ref.UID == uid {
			out = append(out, fmt.Sprintf("%s:%d", r.Name, r.Revision))
		}
	}
	return out
}

// TestRevisionsAndUndo: each template of a set is a ControllerRevision
// named as its pods' revision label; `kubectl rollout undo sts` (the old
// revision's data as a strategic merge patch) rolls the pods back to it
// and renumbers that revision as the newest.
func TestRevisionsAndUndo(t *testing.T) {
	e := startEnv(t)
	e.createSet("web", 2, nil)
	e.waitFor("2 ready pods", func() bool { return e.readyPods("web-0", "web-1") })
	rev1 := e.pods()["web-0"].Labels[statefulset.RevisionLabel]
	e.patchSet("web", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}`)
	atRev := func(rev string) bool {
		if !e.readyPods("web-0", "web-1") {
			return false
		}
		for _, p := range e.pods() {
			if p.Labels[statefulset.RevisionLabel] != rev {
				return false
			}
		}
		return true
	}
	var rev2 string
	e.waitFor("the pods at a new revision", func() bool {
		rev2 = e.getSet("web").Status.UpdateRevision
		return rev2 != rev1 && atRev(rev2)
	})
	want := []string{rev1 + ":1", rev2 + ":2"}
	e.waitFor(fmt.Sprintf("revisions %v", want), func() bool { return slices.Equal(e.revisionsOf("web"), want) })

	var r1 api.ControllerRevision
	if err := e.c.Get(context.Background(), revsInfo, ns, rev1, &r1); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Patch(context.Background(), setsInfo, ns, "web", client.StrategicMergePatchType, r1.Data, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the pods back at "+rev1, func() bool { return atRev(rev1) })
	if img := e.pods()["web-0"].Spec.Containers[0].Image; img != "nginx:1.27" {
		t.Errorf("web-0 runs %s after the undo", img)
	}
	want = []string{rev2 + ":2", rev1 + ":3"}
	e.waitFor(fmt.Sprintf("revisions %v", want), func() bool { return slices.Equal(e.revisionsOf("web"), want) })
}
