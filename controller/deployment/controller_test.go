package deployment_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/deployment"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

var (
	fakeDeployInfo = api.Lookup(api.Resources(), "apps/v1", "deployments")
	fakePodInfo    = api.Lookup(api.Resources(), "v1", "pods")
)

// startFake runs the controller over informers of an in-memory API server
// holding namespace default.
func startFake(t *testing.T, opts deployment.Options) (*fakeapi.Server, *recorder) {
	t.Helper()
	fake := fakeapi.New(api.Resources())
	if _, err := fake.Create(context.Background(), api.Lookup(api.Resources(), "v1", "namespaces"), "",
		&api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	ctx, cancel := context.WithCancel(t.Context())
	deploys := client.NewInformerFor(fake, fakeDeployInfo, client.InformerOptions{})
	pods := client.NewInformerFor(fake, fakePodInfo, client.InformerOptions{})
	ctl := deployment.New(deployment.Deps{Client: fake.Client(), Deployments: deploys, Pods: pods, Recorder: rec}, opts)
	var wg sync.WaitGroup
	wg.Go(func() { _ = deploys.Run(ctx) })
	wg.Go(func() { _ = pods.Run(ctx) })
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return fake, rec
}

func fakePods(t *testing.T, fake *fakeapi.Server) []api.Pod {
	t.Helper()
	var list api.PodList
	if err := fake.List(context.Background(), fakePodInfo, ns, client.ListOptions{}, &list); err != nil {
		t.Fatal(err)
	}
	return live(list.Items)
}

// TestFakeCreatesAndScalesPods: a Deployment gets its pods, controlled
// by it, and scaling it down deletes the surplus.
func TestFakeCreatesAndScalesPods(t *testing.T) {
	fake, rec := startFake(t, deployment.Options{})
	d := newDeployment("web", 3, "nginx:1")
	if err := fake.Client().Create(context.Background(), fakeDeployInfo, ns, d); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "3 pods", func() bool { return len(fakePods(t, fake)) == 3 })
	for _, p := range fakePods(t, fake) {
		if ref := api.ControllerRef(&p.ObjectMeta); ref == nil || ref.UID != d.UID {
			t.Fatalf("pod %s not controlled by the Deployment: %+v", p.Name, p.OwnerReferences)
		}
	}
	if !rec.has(deployment.ReasonSuccessfulCreate) {
		t.Errorf("no %s event: %s", deployment.ReasonSuccessfulCreate, rec)
	}
	if err := fake.Patch(context.Background(), fakeDeployInfo, ns, "web", "application/merge-patch+json",
		[]byte(`{"spec":{"replicas":1}}`), &api.Deployment{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "1 pod", func() bool { return len(fakePods(t, fake)) == 1 })
}

// TestFakeDropsAfterMaxRetries: a Deployment whose pod creates always fail
// is retried MaxRetries times, then left until its next change: the
// creates stop (the controller's own status writes are changes too, so
// there may be a few rounds), where retrying without a limit would go on
// every millisecond.
func TestFakeDropsAfterMaxRetries(t *testing.T) {
	fake, _ := startFake(t, deployment.Options{MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
	var mu sync.Mutex
	creates := 0
	fake.SetIntercept(func(a fakeapi.Action) error {
		if a.Verb == "create" && a.Resource == "/pods" {
			mu.Lock()
			defer mu.Unlock()
			creates++
			return errors.New("injected failure")
		}
		return nil
	})
	if err := fake.Client().Create(context.Background(), fakeDeployInfo, ns, newDeployment("web", 1, "nginx:1")); err != nil {
		t.Fatal(err)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return creates }
	fakeapi.Wait(t, "3 attempts", func() bool { return count() >= 3 })
	deadline := time.Now().Add(5 * time.Second)
	for {
		before := count()
		time.Sleep(100 * time.Millisecond) // 100 retries would be due
		if count() == before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod creates still going after 5s (%d): the Deployment is never dropped", count())
		}
	}
}
