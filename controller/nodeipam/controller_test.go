package nodeipam

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

var nodesRes = api.Lookup(api.Resources(), "v1", "nodes")

type harness struct {
	t      *testing.T
	api    *fakeapi.Server
	ctl    *Controller
	rec    *recorder
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(obj api.Object, typ, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", typ, reason, obj.GetObjectMeta().Name, fmt.Sprintf(format, args...)))
}

func (r *recorder) has(reason string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if contains(e, reason) {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// start runs a controller on cidr/mask over fake (which may already hold
// nodes).
func start(t *testing.T, fake *fakeapi.Server, cidr string, mask int) *harness {
	t.Helper()
	h := &harness{t: t, api: fake, rec: &recorder{}}
	inf := client.NewInformerFor(fake, nodesRes, client.InformerOptions{})
	ctl, err := New(Deps{Client: fake, Nodes: inf, Recorder: h.rec}, Options{ClusterCIDR: netip.MustParsePrefix(cidr), NodeMaskSize: mask})
	if err != nil {
		t.Fatal(err)
	}
	h.ctl = ctl
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.wg.Go(func() { _ = inf.Run(ctx) })
	h.wg.Go(func() { _ = ctl.Run(ctx) })
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	h.cancel()
	h.wg.Wait()
}

func createNode(t *testing.T, fake *fakeapi.Server, name, podCIDR string) {
	t.Helper()
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.NodeSpec{PodCIDR: podCIDR}}
	if podCIDR != "" {
		n.Spec.PodCIDRs = []string{podCIDR}
	}
	if _, err := fake.Create(context.Background(), nodesRes, "", n); err != nil {
		t.Fatal(err)
	}
}

func podCIDROf(fake *fakeapi.Server, name string) string {
	var n api.Node
	if err := fake.Get(context.Background(), nodesRes, "", name, &n); err != nil {
		return ""
	}
	return n.Spec.PodCIDR
}

func TestAssignsDistinctSubnets(t *testing.T) {
	fake := fakeapi.New(api.Resources())
	h := start(t, fake, "10.244.0.0/16", 24)
	seen := map[string]string{}
	for i := range 20 {
		createNode(t, fake, fmt.Sprintf("n%02d", i), "")
	}
	fakeapi.Wait(t, "20 podCIDRs", func() bool {
		for i := range 20 {
			if podCIDROf(fake, fmt.Sprintf("n%02d", i)) == "" {
				return false
			}
		}
		return true
	})
	for i := range 20 {
		name := fmt.Sprintf("n%02d", i)
		var n api.Node
		if err := fake.Get(context.Background(), nodesRes, "", name, &n); err != nil {
			t.Fatal(err)
		}
		p := n.Spec.PodCIDR
		if len(n.Spec.PodCIDRs) != 1 || n.Spec.PodCIDRs[0] != p {
			t.Fatalf("%s: podCIDRs %v do not match podCIDR %s", name, n.Spec.PodCIDRs, p)
		}
		pp := netip.MustParsePrefix(p)
		if pp.Bits() != 24 || !netip.MustParsePrefix("10.244.0.0/16").Contains(pp.Addr()) {
			t.Fatalf("%s: podCIDR %s is no /24 of the cluster CIDR", name, p)
		}
		if other, dup := seen[p]; dup {
			t.Fatalf("%s and %s both got %s", name, other, p)
		}
		seen[p] = name
	}
	if got := len(h.ctl.Assigned()); got != 20 {
		t.Fatalf("controller tracks %d assignments, want 20", got)
	}
}

func TestRebuildsFromExistingNodes(t *testing.T) {
	fake := fakeapi.New(api.Resources())
	// Three subnets in a /22 of /24s are held before the controller starts.
	createNode(t, fake, "a", "10.0.0.0/24")
	createNode(t, fake, "b", "10.0.2.0/24")
	createNode(t, fake, "c", "10.0.3.0/24")
	createNode(t, fake, "d", "")
	start(t, fake, "10.0.0.0/22", 24)
	fakeapi.Wait(t, "node d's podCIDR", func() bool { return podCIDROf(fake, "d") != "" })
	if got := podCIDROf(fake, "d"); got != "10.0.1.0/24" {
		t.Fatalf("node d got %s, want the only free subnet 10.0.1.0/24", got)
	}
	for name, want := range map[string]string{"a": "10.0.0.0/24", "b": "10.0.2.0/24", "c": "10.0.3.0/24"} {
		if got := podCIDROf(fake, name); got != want {
			t.Fatalf("node %s podCIDR changed to %s", name, got)
		}
	}
}

func TestReleaseOnDeleteAndFullRange(t *testing.T) {
	fake := fakeapi.New(api.Resources())
	h := start(t, fake, "10.1.0.0/23", 24) // two subnets
	createNode(t, fake, "a", "")
	createNode(t, fake, "b", "")
	fakeapi.Wait(t, "a and b assigned", func() bool { return podCIDROf(fake, "a") != "" && podCIDROf(fake, "b") != "" })
	freed := podCIDROf(fake, "a")

	createNode(t, fake, "c", "")
	fakeapi.Wait(t, "CIDRNotAvailable for c", func() bool { return h.rec.has("CIDRNotAvailable") })
	if got := podCIDROf(fake, "c"); got != "" {
		t.Fatalf("node c got %s from a full range", got)
	}
	if err := fake.Delete(context.Background(), nodesRes, "", "a", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "c gets a's subnet", func() bool { return podCIDROf(fake, "c") == freed })
	if _, held := h.ctl.Assigned()["a"]; held {
		t.Fatal("deleted node a still holds a subnet")
	}
}

func TestConflictKeepsTheReservation(t *testing.T) {
	fake := fakeapi.New(api.Resources())
	var mu sync.Mutex
	fails := 3
	fake.SetIntercept(func(a fakeapi.Action) error {
		mu.Lock()
		defer mu.Unlock()
		if a.Verb == "update" && a.Resource == "/nodes" && fails > 0 {
			fails--
			return client.NewAPIError(http.StatusConflict, api.StatusReasonConflict, "stale")
		}
		return nil
	})
	h := start(t, fake, "10.2.0.0/16", 24)
	createNode(t, fake, "a", "")
	fakeapi.Wait(t, "a assigned after conflicts", func() bool { return podCIDROf(fake, "a") != "" })
	if got := podCIDROf(fake, "a"); got != "10.2.0.0/24" {
		t.Fatalf("after retries a got %s; want the first subnet it was reserved", got)
	}
	createNode(t, fake, "b", "")
	fakeapi.Wait(t, "b assigned", func() bool { return podCIDROf(fake, "b") != "" })
	if got := podCIDROf(fake, "b"); got != "10.2.1.0/24" {
		t.Fatalf("b got %s; the retries of a leaked subnets", got)
	}
	if len(h.ctl.Assigned()) != 2 {
		t.Fatalf("assigned %v", h.ctl.Assigned())
	}
}

func TestDuplicateExistingSubnetIsReported(t *testing.T) {
	fake := fakeapi.New(api.Resources())
	createNode(t, fake, "a", "10.3.0.0/24")
	createNode(t, fake, "b", "10.3.0.0/24")
	h := start(t, fake, "10.3.0.0/16", 24)
	fakeapi.Wait(t, "the conflict event", func() bool { return h.rec.has("CIDRAssignmentFailed") })
	createNode(t, fake, "c", "")
	fakeapi.Wait(t, "c assigned", func() bool { return podCIDROf(fake, "c") != "" })
	if got := podCIDROf(fake, "c"); got == "10.3.0.0/24" {
		t.Fatal("c got the subnet two nodes already share")
	}
}
