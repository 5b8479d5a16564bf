package statefulset

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

// TestRunOnFakeAPI: Run over informers of the in-memory API server
// creates a parallel set's pods and recreates one deleted behind its back.
func TestRunOnFakeAPI(t *testing.T) {
	res := api.Resources()
	setsInfo, podsInfo := api.Lookup(res, "apps/v1", "statefulsets"), api.Lookup(res, "v1", "pods")
	fake := fakeapi.New(res)
	ctx, cancel := context.WithCancel(t.Context())
	if _, err := fake.Create(ctx, api.Lookup(res, "v1", "namespaces"), "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "ns"}}); err != nil {
		t.Fatal(err)
	}
	sets := client.NewInformerFor(fake, setsInfo, client.InformerOptions{})
	pods := client.NewInformerFor(fake, podsInfo, client.InformerOptions{})
	rec := &fakeRecorder{}
	ctl := New(Deps{Client: fake.Client(), StatefulSets: sets, Pods: pods, Recorder: rec}, Options{})
	var wg sync.WaitGroup
	wg.Go(func() { _ = sets.Run(ctx) })
	wg.Go(func() { _ = pods.Run(ctx) })
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })

	set := testSet(3, parallel)
	set.UID, set.Generation = "", 0
	if err := fake.Client().Create(ctx, setsInfo, "ns", set); err != nil {
		t.Fatal(err)
	}
	exist := func(names ...string) func() bool {
		return func() bool {
			for _, n := range names {
				if _, ok := fake.Meta(podsInfo, "ns", n); !ok {
					return false
				}
			}
			return true
		}
	}
	waitUntil(t, "web-0..2", exist("web-0", "web-1", "web-2"))
	if err := fake.Delete(ctx, podsInfo, "ns", "web-1", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "web-1 again", exist("web-1"))
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
