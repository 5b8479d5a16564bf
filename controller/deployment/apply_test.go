package deployment

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// fakeClient records pod creations and deletions; creations after okCreates
// fail, and deletions fail with the error set for the pod's name.
type fakeClient struct {
	mu        sync.Mutex
	okCreates int
	created   []*api.Pod
	failed    int
	deleted   []string
	deleteErr map[string]error
}

func (f *fakeClient) Create(_ context.Context, _ *api.ResourceInfo, _ string, obj api.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.created) >= f.okCreates {
		f.failed++
		return client.NewAPIError(http.StatusForbidden, api.StatusReasonForbidden, "quota exceeded")
	}
	p := obj.(*api.Pod)
	p.Name = p.GenerateName + fmt.Sprintf("%05d", len(f.created))
	f.created = append(f.created, p)
	return nil
}

func (f *fakeClient) Update(context.Context, *api.ResourceInfo, string, api.Object, ...string) error {
	return nil
}

func (f *fakeClient) Patch(context.Context, *api.ResourceInfo, string, string, string, []byte, api.Object, ...string) error {
	return nil
}

func (f *fakeClient) Delete(_ context.Context, _ *api.ResourceInfo, _, name string, opts client.DeleteOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.deleteErr[name]; err != nil {
		return err
	}
	if opts.Preconditions == nil || opts.Preconditions.UID != "uid-"+name {
		return fmt.Errorf("delete %s without its uid precondition: %+v", name, opts.Preconditions)
	}
	f.deleted = append(f.deleted, name)
	return nil
}

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) Eventf(_ api.Object, eventType, reason, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, eventType+" "+reason+": "+fmt.Sprintf(format, args...))
}

func (l *eventLog) count(prefix string) int {
	n := 0
	for _, e := range l.events {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

func testController(f *fakeClient, ev *eventLog) *Controller {
	res := api.Resources()
	return &Controller{client: f, deployInfo: api.Lookup(res, "apps/v1", "deployments"), podInfo: api.Lookup(res, "v1", "pods"),
		recorder: ev, log: slog.New(slog.DiscardHandler), exp: newExpectations(time.Minute, time.Now),
		written: map[string]*api.Deployment{}}
}

func TestApplyCreatesInSlowStartBatches(t *testing.T) {
	f := &fakeClient{okCreates: 4}
	ev := &eventLog{}
	c := testController(f, ev)
	d := testDeployment(10)
	d.UID = "d-uid"
	d.Spec.Template = tmpl("nginx")
	const key = "default/web"
	err := c.apply(context.Background(), key, d, nil, "h1", nil, plan{create: &creation{hash: "h1", count: 10}})
	if err == nil || !strings.Contains(err.Error(), "quota exceeded") {
		t.Fatalf("apply error %v", err)
	}
	// Batches 1, 2, 4: the third has 1 success and 3 failures; the last 3
	// pods are never attempted.
	if len(f.created) != 4 || f.failed != 3 {
		t.Errorf("created %d, failed %d; want 4 and 3", len(f.created), f.failed)
	}
	if adds, _ := c.exp.pending(key); adds != 4 {
		t.Errorf("pending creations %d, want 4 (the pods created)", adds)
	}
	if n := ev.count("Warning FailedCreate: Error creating:"); n != 3 {
		t.Errorf("%d FailedCreate events, want 3: %v", n, ev.events)
	}
	if n := ev.count("Normal SuccessfulCreate: Created pod: web-h1-"); n != 4 {
		t.Errorf("%d SuccessfulCreate events, want 4: %v", n, ev.events)
	}
	if !slices.Contains(ev.events, "Normal ScalingReplicaSet: Scaled up replica set web-h1 from 0 to 4") {
		t.Errorf("events %v", ev.events)
	}
	for _, p := range f.created {
		if p.Labels[LabelPodTemplateHash] != "h1" || api.ControllerRef(&p.ObjectMeta).UID != "d-uid" {
			t.Errorf("pod %+v", p.ObjectMeta)
		}
	}
}

func TestApplyDeletes(t *testing.T) {
	f := &fakeClient{deleteErr: map[string]error{
		"gone":   client.NewAPIError(http.StatusNotFound, api.StatusReasonNotFound, "not found"),
		"broken": client.NewAPIError(http.StatusInternalServerError, api.StatusReasonInternalError, "disk on fire"),
	}}
	ev := &eventLog{}
	c := testController(f, ev)
	d := testDeployment(1)
	const key = "default/web"
	states := []podState{pod("ok", old(1)), pod("gone", old(1)), pod("broken", old(1)), pod("keep")}
	for i := range states {
		states[i].hash = map[string]string{"ok": "h0", "gone": "h0", "broken": "h0", "keep": "h1"}[states[i].name]
	}
	err := c.apply(context.Background(), key, d, nil, "h1", states, plan{delete: []string{"ok", "gone", "broken"}})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("apply error %v", err)
	}
	if !slices.Equal(f.deleted, []string{"ok"}) {
		t.Errorf("deleted %v", f.deleted)
	}
	// Only the successful deletion is still expected (the cache must show it).
	if _, dels := c.exp.pending(key); dels != 1 {
		t.Errorf("pending deletions %d, want 1", dels)
	}
	c.exp.deletionObserved(key, "ok")
	if !c.exp.satisfied(key) {
		t.Error("not satisfied after the deletion was seen")
	}
	for _, want := range []string{
		"Normal SuccessfulDelete: Deleted pod: ok",
		"Normal ScalingReplicaSet: Scaled down replica set web-h0 from 3 to 2",
	} {
		if !slices.Contains(ev.events, want) {
			t.Errorf("no event %q in %v", want, ev.events)
		}
	}
	if ev.count("Warning FailedDelete: Error deleting:") != 1 {
		t.Errorf("events %v", ev.events)
	}
}

func TestApplyTemplateFromHistory(t *testing.T) {
	f := &fakeClient{okCreates: 10}
	c := testController(f, &eventLog{})
	d := testDeployment(2)
	d.Spec.Template = tmpl("current")
	hist := []Revision{{Revision: 1, Hash: "h-old", Template: tmpl("previous")}, {Revision: 2, Hash: "h-cur", Template: tmpl("current")}}
	if err := c.apply(context.Background(), "default/web", d, hist, "h-cur", nil, plan{create: &creation{hash: "h-old", count: 1}}); err != nil {
		t.Fatal(err)
	}
	if len(f.created) != 1 || f.created[0].Spec.Containers[0].Image != "previous" || f.created[0].Labels[LabelPodTemplateHash] != "h-old" {
		t.Fatalf("created %+v", f.created)
	}
	err := c.apply(context.Background(), "default/web", d, hist, "h-cur", nil, plan{create: &creation{hash: "h-unknown", count: 1}})
	if err == nil {
		t.Error("created pods of a hash without a template")
	}
}

func TestFreshest(t *testing.T) {
	c := testController(&fakeClient{}, &eventLog{})
	cached := &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web", UID: "u", ResourceVersion: "10"}}
	if c.freshest("k", cached) != cached {
		t.Fatal("no write remembered, yet not the cache")
	}
	c.remember("k", &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web", UID: "u", ResourceVersion: "12"}})
	if got := c.freshest("k", cached); got.ResourceVersion != "12" {
		t.Errorf("stale cache: got rv %s, want the written 12", got.ResourceVersion)
	}
	newer := &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web", UID: "u", ResourceVersion: "13"}}
	if c.freshest("k", newer) != newer {
		t.Error("a newer cache lost to an older write")
	}
	c.remember("k", &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web", UID: "other", ResourceVersion: "99"}})
	if c.freshest("k", cached) != cached {
		t.Error("a write of another incarnation was used")
	}
}
