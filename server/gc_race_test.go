package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

// gcRaceRounds is how many owners each policy deletes right after creating
// their dependents.
const gcRaceRounds = 30

// gcRaceServer runs a control plane whose only writers of Deployments and
// their dependents are the test and the garbage collector. "deployment"
// names a controller that would create ReplicaSets and Pods for the
// owners; it is disabled in case it is wired, and harmless if not.
func gcRaceServer(t *testing.T) *client.Client {
	return servertest.Start(t, servertest.Options{DisabledControllers: []string{"deployment"}}).Client()
}

// raceOwner is one Deployment deleted right after its dependents were
// created, before the collector's watches can be expected to have seen them.
type raceOwner struct {
	owner   *api.Deployment
	service string
	lease   string
}

// raceOptions shape one round.
type raceOptions struct {
	policy string
	// serviceBlocks, leaseBlocks: blockOwnerDeletion of each dependent's
	// reference.
	serviceBlocks, leaseBlocks bool
	// holdLease gives the Lease holdFinalizer, so it outlives its deletion.
	holdLease bool
}

// createAndDelete creates an owner, a Service and a Lease that it owns,
// then deletes the owner at once.
func createAndDelete(c *client.Client, ns, name string, opt raceOptions) (raceOwner, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := raceOwner{owner: deployment(name), service: name + "-svc", lease: name + "-lease"}
	if err := c.Create(ctx, resDeploys, ns, o.owner); err != nil {
		return o, fmt.Errorf("create owner %s: %w", name, err)
	}
	refTo := func(block bool) []api.OwnerReference {
		ref := ownerRef(o.owner)
		ref.BlockOwnerDeletion = &block
		return []api.OwnerReference{ref}
	}
	svc := service(o.service, api.ServiceTypeClusterIP, 80)
	svc.OwnerReferences = refTo(opt.serviceBlocks)
	if err := c.Create(ctx, resServices, ns, svc); err != nil {
		return o, fmt.Errorf("create %s: %w", o.service, err)
	}
	l := lease(o.lease)
	l.OwnerReferences = refTo(opt.leaseBlocks)
	if opt.holdLease {
		l.Finalizers = []string{holdFinalizer}
	}
	if err := c.Create(ctx, resLeases, ns, l); err != nil {
		return o, fmt.Errorf("create %s: %w", o.lease, err)
	}
	if err := c.Delete(ctx, resDeploys, ns, name, client.DeleteOptions{PropagationPolicy: opt.policy}); err != nil {
		return o, fmt.Errorf("delete owner %s: %w", name, err)
	}
	return o, nil
}

// leaseNoise rewrites Leases in namespace ns until stop is closed: the
// collector's Lease watch then carries traffic that its Deployment watch
// does not, so a dependent Lease may reach its graph after its owner's
// deletion, as it may on any busy server. (Without this the window is a
// few hundred microseconds wide and the rounds rarely hit it.)
func leaseNoise(t *testing.T, c *client.Client, ns string, stop <-chan struct{}) (wait func()) {
	t.Helper()
	const writers = 4
	blob := strings.Repeat("x", 1<<10)
	for i := range writers {
		if err := c.Create(ctxT(t, 10*time.Second), resLeases, ns, lease(fmt.Sprintf("noise-%d", i))); err != nil {
			t.Fatalf("create noise lease: %v", err)
		}
	}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"noise":"%d%s"}}}`, n, blob)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := c.Patch(ctx, resLeases, ns, fmt.Sprintf("noise-%d", i), client.MergePatchType, []byte(patch), nil)
				cancel()
				if err != nil {
					t.Errorf("noise: %v", err)
					return
				}
			}
		})
	}
	return wg.Wait
}

// raceRounds creates and deletes gcRaceRounds owners, one after the other,
// while Lease traffic runs in namespace ns-noise.
func raceRounds(t *testing.T, c *client.Client, ns, prefix string, opt raceOptions) []raceOwner {
	t.Helper()
	mustCreateNS(t, c, ns+"-noise")
	stop := make(chan struct{})
	waitNoise := leaseNoise(t, c, ns+"-noise", stop)
	defer waitNoise()
	defer close(stop)
	var owners []raceOwner
	for i := range gcRaceRounds {
		o, err := createAndDelete(c, ns, fmt.Sprintf("%s-%d", prefix, i), opt)
		if err != nil {
			t.Fatal(err)
		}
		owners = append(owners, o)
	}
	return owners
}

// getMeta reads an object; ok is false when it does not exist.
func getMeta(t *testing.T, c *client.Client, info *api.ResourceInfo, ns, name string) (*client.Unstructured, bool) {
	t.Helper()
	var u client.Unstructured
	err := c.Get(ctxT(t, 10*time.Second), info, ns, name, &u)
	if client.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", info.Resource, ns, name, err)
	}
	return &u, true
}

// TestGCOrphanRightAfterCreate: dependents of an owner deleted with Orphan
// immediately after they were created survive, without the reference.
func TestGCOrphanRightAfterCreate(t *testing.T) {
	c := gcRaceServer(t)
	const ns = "gc-orphan-race"
	mustCreateNS(t, c, ns)

	owners := raceRounds(t, c, ns, "orphan", raceOptions{policy: client.DeletePropagationOrphan, serviceBlocks: true})
	for _, o := range owners {
		gone(t, c, resDeploys, ns, o.owner.Name, 20*time.Second)
	}
	check := func(when string) {
		t.Helper()
		for _, o := range owners {
			for _, d := range []struct {
				info *api.ResourceInfo
				name string
			}{{resServices, o.service}, {resLeases, o.lease}} {
				u, ok := getMeta(t, c, d.info, ns, d.name)
				if !ok {
					t.Errorf("%s: %s %s of an owner deleted with Orphan was deleted", when, d.info.Resource, d.name)
					continue
				}
				if len(u.OwnerReferences) != 0 {
					t.Errorf("%s: %s %s still refers to its deleted owner: %+v", when, d.info.Resource, d.name, u.OwnerReferences)
				}
			}
		}
	}
	// The orphan finalizer goes only after every dependent is orphaned, so
	// once the owners are gone the references must be gone too.
	check("once the owners are gone")
	// And nothing collects them later, when late watch events arrive.
	time.Sleep(time.Second)
	check("a second later")
	checkAllocations(t, c)
}

// TestGCForegroundRightAfterCreate: an owner deleted with Foreground
// immediately after its blocking dependents were created stays, marked,
// while any of them exists.
func TestGCForegroundRightAfterCreate(t *testing.T) {
	c := gcRaceServer(t)
	const ns = "gc-fg-race"
	mustCreateNS(t, c, ns)

	// Only the Lease blocks: a blocking Service, seen at once, would make
	// the owner wait long enough for the Lease to be seen too.
	owners := raceRounds(t, c, ns, "fg", raceOptions{policy: client.DeletePropagationForeground, leaseBlocks: true, holdLease: true})
	ownerWaits := func(o raceOwner, when string) {
		t.Helper()
		u, ok := getMeta(t, c, resDeploys, ns, o.owner.Name)
		if !ok {
			t.Errorf("%s: owner %s is gone while its blocking Lease exists", when, o.owner.Name)
			return
		}
		if u.DeletionTimestamp == nil || !slices.Contains(u.Finalizers, "foregroundDeletion") {
			t.Errorf("%s: owner %s: deletionTimestamp %v finalizers %v", when, o.owner.Name, u.DeletionTimestamp, u.Finalizers)
		}
	}
	for _, o := range owners {
		// The collector deletes the dependents: the Service goes, the
		// held Lease is only marked.
		gone(t, c, resServices, ns, o.service, 20*time.Second)
		eventually(t, 20*time.Second, o.lease+" marked for deletion", func() (bool, error) {
			u, ok := getMeta(t, c, resLeases, ns, o.lease)
			return ok && u.DeletionTimestamp != nil, nil
		})
		ownerWaits(o, "dependents deleted")
	}
	// Still waiting a moment later.
	time.Sleep(300 * time.Millisecond)
	for _, o := range owners {
		ownerWaits(o, "300ms later")
	}
	if t.Failed() {
		return
	}
	// Releasing the Leases lets the owners go.
	for _, o := range owners {
		dropFinalizers(t, c, resLeases, ns, o.lease)
	}
	for _, o := range owners {
		gone(t, c, resLeases, ns, o.lease, 20*time.Second)
		gone(t, c, resDeploys, ns, o.owner.Name, 20*time.Second)
	}
	checkAllocations(t, c)
}
