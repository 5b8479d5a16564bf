package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/scheduler"
)

// runScheduler starts a scheduler with its own informers until the test
// ends and checks that Run returns.
func runScheduler(t *testing.T, c *client.Client, opts scheduler.Options, rec scheduler.EventRecorder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pods, nodes := informers(t, ctx, c)
	opts.Workers = 4
	s := scheduler.New(scheduler.Deps{Client: c, Pods: pods, Nodes: nodes, Recorder: rec, Log: testLogger()}, opts)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not return after cancel")
		}
	})
}

func listPods(t *testing.T, c *client.Client, ns string) []api.Pod {
	t.Helper()
	var l api.PodList
	if err := c.List(context.Background(), podsRes, ns, client.ListOptions{}, &l); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestBindsToEligibleNodesAndSpreads(t *testing.T) {
	c := startServer(t)
	ns := "sched"
	mustCreate(t, c, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}})
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, c, nodesRes, "", readyNode(n, "4", "8Gi", "110", nil))
	}
	ssd := readyNode("ssd", "4", "8Gi", "110", map[string]string{"disk": "ssd"})
	ssd.Spec.Taints = []api.Taint{{Key: "dedicated", Value: "storage", Effect: api.TaintEffectNoSchedule}}
	mustCreate(t, c, nodesRes, "", ssd)
	notReady := readyNode("down", "64", "64Gi", "110", nil)
	notReady.Status.Conditions[0].Status = api.ConditionFalse
	mustCreate(t, c, nodesRes, "", notReady)
	cordoned := readyNode("cordoned", "64", "64Gi", "110", nil)
	cordoned.Spec.Unschedulable = true
	mustCreate(t, c, nodesRes, "", cordoned)

	runScheduler(t, c, scheduler.Options{}, nil)

	web := newDeployment(t, c, ns, "web")
	for i := range 9 {
		mustCreate(t, c, podsRes, ns, newPod(fmt.Sprintf("web-%d", i), "100m", web))
	}
	storage := newPod("storage", "", nil)
	storage.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	storage.Spec.Tolerations = []api.Toleration{{Key: "dedicated", Operator: "Equal", Value: "storage", Effect: api.TaintEffectNoSchedule}}
	mustCreate(t, c, podsRes, ns, storage)
	other := newPod("other", "", nil)
	other.Spec.SchedulerName = "someone-else"
	mustCreate(t, c, podsRes, ns, other)

	var pods []api.Pod
	eventually(t, 20*time.Second, "10 pods bound", func() (bool, error) {
		pods = listPods(t, c, ns)
		bound := 0
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == 10, nil
	})
	perNode := map[string]int{}
	for _, p := range pods {
		switch {
		case p.Name == "other":
			if p.Spec.NodeName != "" {
				t.Errorf("pod for another scheduler bound to %s", p.Spec.NodeName)
			}
		case p.Name == "storage":
			if p.Spec.NodeName != "ssd" {
				t.Errorf("storage pod on %q, want ssd (nodeSelector + toleration)", p.Spec.NodeName)
			}
		default:
			perNode[p.Spec.NodeName]++
			if c := api.GetPodCondition(&p.Status, api.PodScheduled); c == nil || c.Status != api.ConditionTrue {
				t.Errorf("pod %s bound without PodScheduled=True: %+v", p.Name, c)
			}
		}
	}
	for _, n := range []string{"a", "b", "c"} {
		if perNode[n] != 3 {
			t.Errorf("web replicas per node = %v, want 3 on each of a, b, c", perNode)
			break
		}
	}
	// Still running, the pod for another scheduler stays pending.
	time.Sleep(200 * time.Millisecond)
	var p api.Pod
	if err := c.Get(context.Background(), podsRes, ns, "other", &p); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("other: node %q, err %v", p.Spec.NodeName, err)
	}
}

func podScheduledCond(t *testing.T, c *client.Client, ns, name string) (*api.Pod, *api.PodCondition) {
	t.Helper()
	var p api.Pod
	if err := c.Get(context.Background(), podsRes, ns, name, &p); err != nil {
		t.Fatal(err)
	}
	return &p, api.GetPodCondition(&p.Status, api.PodScheduled)
}

func TestUnschedulableUntilANodeFits(t *testing.T) {
	c := startServer(t)
	ns := "sched"
	mustCreate(t, c, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}})
	mustCreate(t, c, nodesRes, "", readyNode("small-1", "1", "2Gi", "110", map[string]string{"size": "large"}))
	mustCreate(t, c, nodesRes, "", readyNode("small-2", "1", "2Gi", "110", map[string]string{"size": "large"}))
	mustCreate(t, c, nodesRes, "", readyNode("zoned", "8", "2Gi", "110", map[string]string{"zone": "z1"}))

	// Back-off far beyond the test: only the node event can bring the pod back.
	runScheduler(t, c, scheduler.Options{RetryBase: time.Hour, RetryMax: time.Hour}, &apiRecorder{c: c})
	big := newPod("big", "2", nil)
	big.Spec.NodeSelector = map[string]string{"size": "large"}
	mustCreate(t, c, podsRes, ns, big)

	want := "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu."
	eventually(t, 10*time.Second, "PodScheduled=False", func() (bool, error) {
		_, cond := podScheduledCond(t, c, ns, "big")
		return cond != nil && cond.Status == api.ConditionFalse, nil
	})
	p, cond := podScheduledCond(t, c, ns, "big")
	if cond.Reason != "Unschedulable" || cond.Message != want || p.Spec.NodeName != "" {
		t.Fatalf("condition %+v on node %q, want reason Unschedulable, message %q", cond, p.Spec.NodeName, want)
	}
	eventually(t, 10*time.Second, "FailedScheduling event", func() (bool, error) {
		var evs api.EventList
		err := c.List(context.Background(), eventsRes, ns, client.ListOptions{FieldSelector: "involvedObject.name=big,reason=FailedScheduling"}, &evs)
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Type == api.EventTypeWarning && e.Message == want && e.InvolvedObject.UID == p.UID {
				return true, nil
			}
		}
		return false, fmt.Errorf("events: %+v", evs.Items)
	})

	// A node that matches the selector but is too small does not help.
	mustCreate(t, c, nodesRes, "", readyNode("large-small", "1", "2Gi", "110", map[string]string{"size": "large"}))
	want2 := "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 3 Insufficient cpu."
	eventually(t, 10*time.Second, "the message to count the new node", func() (bool, error) {
		_, cond := podScheduledCond(t, c, ns, "big")
		return cond != nil && cond.Message == want2, fmt.Errorf("condition %+v", cond)
	})
	// A fitting node arrives: the pod is bound to it.
	mustCreate(t, c, nodesRes, "", readyNode("large", "4", "8Gi", "110", map[string]string{"size": "large"}))
	eventually(t, 10*time.Second, "big bound to large", func() (bool, error) {
		p, cond := podScheduledCond(t, c, ns, "big")
		return p.Spec.NodeName == "large" && cond != nil && cond.Status == api.ConditionTrue, fmt.Errorf("node %q cond %+v", p.Spec.NodeName, cond)
	})
	eventually(t, 10*time.Second, "Scheduled event", func() (bool, error) {
		var evs api.EventList
		err := c.List(context.Background(), eventsRes, ns, client.ListOptions{FieldSelector: "involvedObject.name=big,reason=Scheduled"}, &evs)
		return err == nil && len(evs.Items) == 1 && strings.HasSuffix(evs.Items[0].Message, "to large"), err
	})
}

// TestCapacityFreedByDeletion: a node full by pod count takes a waiting
// pod once one of its pods is deleted, and the assume cache never lets
// pods scheduled back to back overfill it.
func TestCapacityFreedByDeletion(t *testing.T) {
	c := startServer(t)
	ns := "sched"
	mustCreate(t, c, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}})
	mustCreate(t, c, nodesRes, "", readyNode("n1", "2", "4Gi", "3", nil))
	mustCreate(t, c, nodesRes, "", readyNode("n2", "1", "4Gi", "10", nil))
	runScheduler(t, c, scheduler.Options{RetryBase: time.Hour, RetryMax: time.Hour}, nil)

	// 2 cpu on n1 (3 pods max) + 1 cpu on n2: exactly four 500m pods fit on n1
	// by cpu but only 3 by count, two on n2.
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() { mustCreate(t, c, podsRes, ns, newPod(fmt.Sprintf("p%d", i), "500m", nil)) })
	}
	wg.Wait()
	count := func() (perNode map[string]int, pending []string) {
		perNode = map[string]int{}
		for _, p := range listPods(t, c, ns) {
			if p.Spec.NodeName == "" {
				pending = append(pending, p.Name)
			} else {
				perNode[p.Spec.NodeName]++
			}
		}
		return perNode, pending
	}
	eventually(t, 10*time.Second, "5 pods bound, 1 pending", func() (bool, error) {
		per, pending := count()
		return per["n1"] == 3 && per["n2"] == 2 && len(pending) == 1, fmt.Errorf("per node %v pending %v", per, pending)
	})
	_, pending := count()
	_, cond := podScheduledCond(t, c, ns, pending[0])
	eventually(t, 10*time.Second, "pending pod marked unschedulable", func() (bool, error) {
		_, cond = podScheduledCond(t, c, ns, pending[0])
		return cond != nil && cond.Reason == "Unschedulable", nil
	})
	if want := "0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods."; cond.Message != want {
		t.Fatalf("message %q, want %q", cond.Message, want)
	}
	// Free a slot on n1.
	for _, p := range listPods(t, c, ns) {
		if p.Spec.NodeName == "n1" {
			zero := int64(0)
			if err := c.Delete(context.Background(), podsRes, ns, p.Name, client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	eventually(t, 10*time.Second, "waiting pod bound to n1", func() (bool, error) {
		var p api.Pod
		err := c.Get(context.Background(), podsRes, ns, pending[0], &p)
		return err == nil && p.Spec.NodeName == "n1", err
	})
}
