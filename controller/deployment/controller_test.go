package deployment_test

import (
	"context"
	"errors"
	"strings"
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
	fakeRSInfo     = api.Lookup(api.Resources(), "apps/v1", "replicasets")
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
	rss := client.NewInformerFor(fake, fakeRSInfo, client.InformerOptions{})
	ctl := deployment.New(deployment.Deps{Client: fake.Client(), Deployments: deploys, ReplicaSets: rss, Pods: pods, Recorder: rec}, opts)
	var wg sync.WaitGroup
	wg.Go(func() { _ = deploys.Run(ctx) })
	wg.Go(func() { _ = pods.Run(ctx) })
	wg.Go(func() { _ = rss.Run(ctx) })
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return fake, rec
}

func fakeReplicaSets(t *testing.T, fake *fakeapi.Server) []api.ReplicaSet {
	t.Helper()
	var list api.ReplicaSetList
	if err := fake.List(context.Background(), fakeRSInfo, ns, client.ListOptions{}, &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestFakeCreatesAndScalesReplicaSet: a Deployment gets one ReplicaSet of
// spec.replicas, controlled by it, and never a pod of its own; scaling the
// Deployment scales the ReplicaSet.
func TestFakeCreatesAndScalesReplicaSet(t *testing.T) {
	fake, rec := startFake(t, deployment.Options{})
	d := newDeployment("web", 3, "nginx:1")
	if err := fake.Client().Create(context.Background(), fakeDeployInfo, ns, d); err != nil {
		t.Fatal(err)
	}
	replicasOf := func() int32 {
		l := fakeReplicaSets(t, fake)
		if len(l) != 1 || l[0].Spec.Replicas == nil {
			return -1
		}
		return *l[0].Spec.Replicas
	}
	fakeapi.Wait(t, "a replica set of 3", func() bool { return replicasOf() == 3 })
	rs := fakeReplicaSets(t, fake)[0]
	if ref := api.ControllerRef(&rs.ObjectMeta); ref == nil || ref.UID != d.UID {
		t.Fatalf("replica set %s not controlled by the Deployment: %+v", rs.Name, rs.OwnerReferences)
	}
	if h := rs.Labels[deployment.LabelPodTemplateHash]; h == "" || rs.Name != "web-"+h {
		t.Errorf("replica set %s, labels %v", rs.Name, rs.Labels)
	}
	// The event follows the create that made the ReplicaSet visible: wait
	// for it rather than expect it at once.
	fakeapi.Wait(t, "the scaling event", func() bool { return rec.has("Scaled up replica set " + rs.Name + " from 0 to 3") })
	if err := fake.Patch(context.Background(), fakeDeployInfo, ns, "web", "application/merge-patch+json",
		[]byte(`{"spec":{"replicas":1}}`), &api.Deployment{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "scaled to 1", func() bool { return replicasOf() == 1 })
	if pods := fakePods(t, fake); len(pods) != 0 {
		t.Errorf("the Deployment controller created %d pods", len(pods))
	}
}

func fakePods(t *testing.T, fake *fakeapi.Server) []api.Pod {
	t.Helper()
	var list api.PodList
	if err := fake.List(context.Background(), fakePodInfo, ns, client.ListOptions{}, &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestFakeDropsAfterMaxRetries: a Deployment whose ReplicaSet creates always fail
// is retried MaxRetries times, then left until its next change: the
// creates stop (the controller's own status writes are changes too, so
// there may be a few rounds), where retrying without a limit would go on
// every millisecond.
func TestFakeDropsAfterMaxRetries(t *testing.T) {
	fake, _ := startFake(t, deployment.Options{MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
	var mu sync.Mutex
	creates := 0
	fake.SetIntercept(func(a fakeapi.Action) error {
		if a.Verb == "create" && strings.HasSuffix(a.Resource, "/replicasets") {
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
			t.Fatalf("replica set creates still going after 5s (%d): the Deployment is never dropped", count())
		}
	}
}
