package record_test

import (
	"context"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/record"
	"github.com/skiff-dev/skiff/server/servertest"
)

// startServer is a server whose controllers write no Events about the
// test's objects (the scheduler would report its unschedulable pod).
func startServer(t *testing.T) *client.Client {
	t.Helper()
	return servertest.Start(t, servertest.Options{DisabledControllers: []string{"scheduler", "nodelifecycle"}}).Client()
}

func lookup(t *testing.T, resource string) *api.ResourceInfo {
	t.Helper()
	for _, r := range api.Resources() {
		if r.Resource == resource {
			return r
		}
	}
	t.Fatalf("no resource %s", resource)
	return nil
}

// eventsAbout lists the Events in ns whose involvedObject has name and
// whose source is one of the tests' components.
func eventsAbout(ctx context.Context, t *testing.T, c *client.Client, ns, name string) []api.Event {
	t.Helper()
	var list api.EventList
	if err := c.List(ctx, lookup(t, "events"), ns, client.ListOptions{FieldSelector: "involvedObject.name=" + name}, &list); err != nil {
		t.Fatalf("list events: %v", err)
	}
	var out []api.Event
	for _, ev := range list.Items {
		if ev.Source.Component == "test-controller" || ev.Source.Component == "test" {
			out = append(out, ev)
		}
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRecorderAgainstServer(t *testing.T) {
	c := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	pod := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: "web-0", Namespace: "default"},
		Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}},
	}
	if err := c.Create(ctx, lookup(t, "pods"), "default", pod); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-a"}}
	if err := c.Create(ctx, lookup(t, "nodes"), "", node); err != nil {
		t.Fatalf("create node: %v", err)
	}

	rec := record.NewRecorder(c, "test-controller", nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rec.Run(runCtx) }()

	rec.Eventf(pod, api.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", "default", "web-0", "node-a")
	waitFor(t, "the pod's event", func() bool { return len(eventsAbout(ctx, t, c, "default", "web-0")) == 1 })
	ev := eventsAbout(ctx, t, c, "default", "web-0")[0]
	want := api.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web-0", Namespace: "default", UID: pod.UID, ResourceVersion: pod.ResourceVersion}
	if ev.InvolvedObject != want {
		t.Errorf("involvedObject %+v, want %+v", ev.InvolvedObject, want)
	}
	if ev.Reason != "Scheduled" || ev.Message != "Successfully assigned default/web-0 to node-a" || ev.Type != api.EventTypeNormal {
		t.Errorf("reason/message/type: %q %q %q", ev.Reason, ev.Message, ev.Type)
	}
	if ev.Source.Component != "test-controller" || ev.ReportingController != "test-controller" || ev.Count != 1 {
		t.Errorf("source %+v reportingComponent %q count %d", ev.Source, ev.ReportingController, ev.Count)
	}
	if ev.FirstTimestamp.IsZero() || !ev.FirstTimestamp.Equal(ev.LastTimestamp.Time) {
		t.Errorf("timestamps first %v last %v", ev.FirstTimestamp, ev.LastTimestamp)
	}

	// The same event again: the stored Event's count goes up, no new Event.
	rec.Eventf(pod, api.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", "default", "web-0", "node-a")
	rec.Eventf(pod, api.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", "default", "web-0", "node-a")
	waitFor(t, "count 3", func() bool {
		evs := eventsAbout(ctx, t, c, "default", "web-0")
		return len(evs) == 1 && evs[0].Count == 3
	})
	again := eventsAbout(ctx, t, c, "default", "web-0")[0]
	if again.Name != ev.Name || again.LastTimestamp.Before(ev.LastTimestamp.Time) || !again.FirstTimestamp.Equal(ev.FirstTimestamp.Time) {
		t.Errorf("aggregated event %s first %v last %v; first write %s first %v last %v",
			again.Name, again.FirstTimestamp, again.LastTimestamp, ev.Name, ev.FirstTimestamp, ev.LastTimestamp)
	}

	// Another reason is another Event.
	rec.Eventf(pod, api.EventTypeWarning, "Unhealthy", "Readiness probe failed")
	waitFor(t, "a second event", func() bool { return len(eventsAbout(ctx, t, c, "default", "web-0")) == 2 })

	// A cluster-scoped object's Event lives in default.
	rec.Eventf(node, api.EventTypeWarning, "NodeNotReady", "Node %s status is now: NodeNotReady", node.Name)
	waitFor(t, "the node's event", func() bool { return len(eventsAbout(ctx, t, c, "default", "node-a")) == 1 })
	nev := eventsAbout(ctx, t, c, "default", "node-a")[0]
	if nev.InvolvedObject.Kind != "Node" || nev.InvolvedObject.Namespace != "" || nev.Type != api.EventTypeWarning {
		t.Errorf("node event %+v type %s", nev.InvolvedObject, nev.Type)
	}

	// Run stops cleanly.
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if rec.Dropped() != 0 || rec.RateLimited() != 0 {
		t.Errorf("dropped %d rate-limited %d, want none", rec.Dropped(), rec.RateLimited())
	}
}

func TestRecorderSpamFilterAgainstServer(t *testing.T) {
	c := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "noisy"}}
	if err := c.Create(ctx, lookup(t, "nodes"), "", node); err != nil {
		t.Fatalf("create node: %v", err)
	}
	rec := record.NewRecorder(c, "test", nil)
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	for i := range record.SpamBurst + 10 {
		rec.Eventf(node, api.EventTypeNormal, "Flapping", "flap %d", i)
	}
	waitFor(t, "the burst to be written or limited", func() bool {
		return rec.Written()+rec.RateLimited() == record.SpamBurst+10
	})
	if got := rec.RateLimited(); got != 10 {
		t.Errorf("RateLimited() = %d, want 10", got)
	}
	if got := len(eventsAbout(ctx, t, c, "default", "noisy")); got != record.SpamBurst {
		t.Errorf("%d events stored, want %d", got, record.SpamBurst)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
