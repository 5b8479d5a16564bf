package serviceaccount_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/serviceaccount"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

var (
	res   = api.Resources()
	resNS = api.Lookup(res, "v1", "namespaces")
	resSA = api.Lookup(res, "v1", "serviceaccounts")
)

func activeNamespace(name string) *api.Namespace {
	return &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}, Status: api.NamespaceStatus{Phase: api.NamespaceActive}}
}

func TestReconcile(t *testing.T) {
	deleting := activeNamespace("old")
	now := api.Now()
	deleting.DeletionTimestamp = &now
	terminating := activeNamespace("old")
	terminating.Status.Phase = api.NamespaceTerminating
	for _, tc := range []struct {
		name       string
		ns         *api.Namespace
		hasDefault bool
		create     bool
	}{
		{"active namespace without one", activeNamespace("team-a"), false, true},
		{"active namespace with one", activeNamespace("team-a"), true, false},
		{"namespace not in the cache", nil, false, false},
		{"namespace being deleted", deleting, false, false},
		{"namespace terminating", terminating, false, false},
		{"namespace without a phase yet", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "x"}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sa := serviceaccount.Reconcile(tc.ns, tc.hasDefault)
			if (sa != nil) != tc.create {
				t.Fatalf("Reconcile = %+v, want create %v", sa, tc.create)
			}
			if sa != nil && (sa.Name != "default" || sa.Namespace != tc.ns.Name) {
				t.Fatalf("Reconcile = %s/%s", sa.Namespace, sa.Name)
			}
		})
	}
}

// harness runs the controller over fake-API informers.
func start(t *testing.T, fake *fakeapi.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	nsInf := client.NewInformerFor(fake, resNS, client.InformerOptions{})
	saInf := client.NewInformerFor(fake, resSA, client.InformerOptions{})
	ctl, err := serviceaccount.New(serviceaccount.Deps{Client: fake.Client(), Namespaces: nsInf, ServiceAccounts: saInf}, serviceaccount.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = nsInf.Run(ctx) })
	wg.Go(func() { _ = saInf.Run(ctx) })
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func defaultSA(fake *fakeapi.Server, ns string) (api.ObjectMeta, bool) {
	return fake.Meta(resSA, ns, "default")
}

// TestFakeKeepsDefaultServiceAccount: every active namespace gets its
// "default" ServiceAccount, a deleted one comes back (a new object), one
// the user changed is left alone, and a terminating namespace gets none.
func TestFakeKeepsDefaultServiceAccount(t *testing.T) {
	fake := fakeapi.New(res)
	c := fake.Client()
	ctx := t.Context()
	if err := c.Create(ctx, resNS, "", activeNamespace("default")); err != nil {
		t.Fatal(err)
	}
	start(t, fake)
	fakeapi.Wait(t, "default/default", func() bool { _, ok := defaultSA(fake, "default"); return ok })

	if err := c.Create(ctx, resNS, "", activeNamespace("team-a")); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "team-a/default", func() bool { _, ok := defaultSA(fake, "team-a"); return ok })
	first, _ := defaultSA(fake, "team-a")

	if err := c.Delete(ctx, resSA, "team-a", "default", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "team-a/default recreated", func() bool {
		m, ok := defaultSA(fake, "team-a")
		return ok && m.UID != first.UID
	})

	// Another ServiceAccount's deletion is not the controller's business.
	other := &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "builder", Namespace: "team-a"}}
	if err := c.Create(ctx, resSA, "team-a", other); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, resSA, "team-a", "builder", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A namespace on its way out: deleting its ServiceAccount does not
	// bring it back.
	if err := c.Create(ctx, resNS, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "old"},
		Spec: api.NamespaceSpec{Finalizers: []string{api.FinalizerKubernetes}}, Status: api.NamespaceStatus{Phase: api.NamespaceActive}}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "old/default", func() bool { _, ok := defaultSA(fake, "old"); return ok })
	if err := c.Delete(ctx, resNS, "", "old", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, resSA, "old", "default", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A fence: a namespace created after those deletions gets its account,
	// so the one worker has seen the events before it.
	if err := c.Create(ctx, resNS, "", activeNamespace("fence")); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "fence/default", func() bool { _, ok := defaultSA(fake, "fence"); return ok })
	if _, ok := defaultSA(fake, "old"); ok {
		t.Fatal("the terminating namespace got its ServiceAccount back")
	}
	if _, ok := fake.Meta(resSA, "team-a", "builder"); ok {
		t.Fatal("builder was recreated")
	}
	var added []string
	for _, h := range fake.History() {
		if strings.HasPrefix(h, "ADDED /serviceaccounts ") && strings.HasSuffix(h, "/default") {
			added = append(added, strings.TrimPrefix(h, "ADDED /serviceaccounts "))
		}
	}
	if got := strings.Join(added, " "); got != "default/default team-a/default team-a/default old/default fence/default" {
		t.Errorf("default service accounts created: %s", got)
	}
}

// TestFakeRetriesFailedCreate: a failed create is retried; AlreadyExists
// (a stale cache) is not an error.
func TestFakeRetriesFailedCreate(t *testing.T) {
	fake := fakeapi.New(res)
	c := fake.Client()
	if err := c.Create(t.Context(), resNS, "", activeNamespace("team-b")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	failures := 2
	fake.SetIntercept(func(a fakeapi.Action) error {
		mu.Lock()
		defer mu.Unlock()
		if a.Verb == "create" && a.Resource == "/serviceaccounts" && failures > 0 {
			failures--
			return client.NewAPIError(http.StatusInternalServerError, api.StatusReasonInternalError, "injected")
		}
		return nil
	})
	start(t, fake)
	fakeapi.Wait(t, "team-b/default after two failures", func() bool { _, ok := defaultSA(fake, "team-b"); return ok })
	var injected int
	for _, a := range fake.Actions() {
		if a.Verb == "create" && a.Err != nil && strings.Contains(a.Err.Error(), "injected") {
			injected++
		}
	}
	if injected != 2 {
		t.Errorf("%d failed creates recorded, want 2: %v", injected, fake.Actions())
	}
}

func TestNewRejectsMissingDeps(t *testing.T) {
	if _, err := serviceaccount.New(serviceaccount.Deps{}, serviceaccount.Options{}); err == nil {
		t.Fatal("New accepted no deps")
	}
}
