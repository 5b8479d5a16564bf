package server_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

const holdFinalizer = "skiff.test/hold"

// dropFinalizers removes every finalizer of an object with a merge patch.
func dropFinalizers(t *testing.T, c *client.Client, info *api.ResourceInfo, ns, name string) {
	t.Helper()
	err := c.Patch(ctxT(t, 10*time.Second), info, ns, name, client.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), nil)
	if err != nil {
		t.Fatalf("drop finalizers of %s/%s: %v", ns, name, err)
	}
}

// gone polls until a Get of the object is NotFound.
func gone(t *testing.T, c *client.Client, info *api.ResourceInfo, ns, name string, d time.Duration) {
	t.Helper()
	eventually(t, d, fmt.Sprintf("%s %s/%s deleted", info.Resource, ns, name), func() (bool, error) {
		var u client.Unstructured
		err := c.Get(ctxT(t, 5*time.Second), info, ns, name, &u)
		if client.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func exists(t *testing.T, c *client.Client, info *api.ResourceInfo, ns, name string) *client.Unstructured {
	t.Helper()
	var u client.Unstructured
	if err := c.Get(ctxT(t, 5*time.Second), info, ns, name, &u); err != nil {
		t.Fatalf("%s %s/%s: %v", info.Resource, ns, name, err)
	}
	return &u
}

func endpointSlice(name, svc string) *api.EndpointSlice {
	port, proto, pname := int32(80), api.ProtocolTCP, "p0"
	ready := true
	return &api.EndpointSlice{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{
			api.LabelServiceName: svc, api.LabelManagedBy: "skiff-test"}},
		AddressType: api.AddressTypeIPv4,
		Endpoints:   []api.Endpoint{{Addresses: []string{"10.244.0.5"}, Conditions: api.EndpointConditions{Ready: &ready}}},
		Ports:       []api.EndpointPort{{Name: &pname, Protocol: &proto, Port: &port}},
	}
}

func TestNamespaceDeletionDeletesEverything(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 60*time.Second)
	const ns = "doomed"
	mustCreateNS(t, c, ns)
	mustCreate := func(info *api.ResourceInfo, obj api.Object) {
		t.Helper()
		if err := c.Create(ctx, info, ns, obj); err != nil {
			t.Fatalf("create %s: %v", info.Resource, err)
		}
	}
	var ips []string
	for i := range 3 {
		s := service(fmt.Sprintf("svc-%d", i), api.ServiceTypeNodePort, 80)
		mustCreate(resServices, s)
		ips = append(ips, s.Spec.ClusterIP)
	}
	mustCreate(resDeploys, deployment("web"))
	mustCreate(resSlices, endpointSlice("svc-0-abc", "svc-0"))
	mustCreate(resLeases, lease("l1"))
	// This Lease holds the namespace in Terminating until its finalizer goes.
	held := lease("held")
	held.Finalizers = []string{holdFinalizer}
	mustCreate(resLeases, held)
	survivor := service("survivor", api.ServiceTypeClusterIP, 80)
	if err := c.Create(ctx, resServices, "default", survivor); err != nil {
		t.Fatal(err)
	}

	// DELETE answers with the namespace, now Terminating.
	var out api.Namespace
	if err := c.Do(ctx, "DELETE", "/api/v1/namespaces/"+ns, nil, &out); err != nil {
		t.Fatalf("delete namespace: %v", err)
	}
	if out.DeletionTimestamp == nil || out.Status.Phase != api.NamespaceTerminating {
		t.Fatalf("DELETE answered deletionTimestamp %v phase %q, want Terminating", out.DeletionTimestamp, out.Status.Phase)
	}
	// Everything but the held Lease goes; the namespace stays Terminating.
	for _, o := range []struct {
		info *api.ResourceInfo
		name string
	}{{resServices, "svc-0"}, {resServices, "svc-1"}, {resServices, "svc-2"}, {resDeploys, "web"}, {resSlices, "svc-0-abc"}, {resLeases, "l1"}} {
		gone(t, c, o.info, ns, o.name, 20*time.Second)
	}
	l := exists(t, c, resLeases, ns, "held")
	if l.DeletionTimestamp == nil {
		t.Fatal("the held Lease was not deleted (no deletionTimestamp)")
	}
	var cur api.Namespace
	if err := c.Get(ctx, resNamespaces, "", ns, &cur); err != nil {
		t.Fatalf("namespace gone while a Lease holds it: %v", err)
	}
	if cur.Status.Phase != api.NamespaceTerminating {
		t.Fatalf("namespace phase %q, want Terminating", cur.Status.Phase)
	}
	// Creating in a Terminating namespace is forbidden.
	err := c.Create(ctx, resServices, ns, service("late", api.ServiceTypeClusterIP, 80))
	ae := wantAPIError(t, err, 403, "terminat")
	if ae.Status.Reason != api.StatusReasonForbidden {
		t.Fatalf("reason %q, want Forbidden", ae.Status.Reason)
	}
	// The Services' IPs are free again.
	for _, ip := range ips {
		if ipaExists(t, c, ip) {
			t.Errorf("IPAddress %s outlived its Service", ip)
		}
	}

	dropFinalizers(t, c, resLeases, ns, "held")
	gone(t, c, resLeases, ns, "held", 20*time.Second)
	gone(t, c, resNamespaces, "", ns, 30*time.Second)
	exists(t, c, resServices, "default", "survivor")
	checkAllocations(t, c)

	// The name can be used again, empty.
	mustCreateNS(t, c, ns)
	var sl api.ServiceList
	if err := c.List(ctx, resServices, ns, client.ListOptions{}, &sl); err != nil || len(sl.Items) != 0 {
		t.Fatalf("recreated namespace holds %d Services (%v)", len(sl.Items), err)
	}
}

// gcFixture is a Deployment owning two Services, a Lease and an
// EndpointSlice, in namespace ns.
type gcFixture struct {
	owner      *api.Deployment
	dependents []struct {
		info *api.ResourceInfo
		name string
	}
	ips []string
}

func newGCFixture(t *testing.T, c *client.Client, ns, prefix string, block bool, holdOne bool) *gcFixture {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	f := &gcFixture{owner: deployment(prefix + "-owner")}
	if err := c.Create(ctx, resDeploys, ns, f.owner); err != nil {
		t.Fatal(err)
	}
	ref := ownerRef(f.owner)
	if block {
		yes := true
		ref.BlockOwnerDeletion = &yes
	}
	add := func(info *api.ResourceInfo, obj api.Object) {
		m := obj.GetObjectMeta()
		m.OwnerReferences = []api.OwnerReference{ref}
		if err := c.Create(ctx, info, ns, obj); err != nil {
			t.Fatalf("create dependent %s: %v", m.Name, err)
		}
		f.dependents = append(f.dependents, struct {
			info *api.ResourceInfo
			name string
		}{info, m.Name})
	}
	for i := range 2 {
		s := service(fmt.Sprintf("%s-svc-%d", prefix, i), api.ServiceTypeNodePort, 80)
		add(resServices, s)
		f.ips = append(f.ips, s.Spec.ClusterIP)
	}
	add(resSlices, endpointSlice(prefix+"-svc-0-xyz", prefix+"-svc-0"))
	l := lease(prefix + "-lease")
	if holdOne {
		l.Finalizers = []string{holdFinalizer}
	}
	add(resLeases, l)
	return f
}

func TestGarbageCollection(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	const ns = "gc"
	mustCreateNS(t, c, ns)

	t.Run("Background", func(t *testing.T) {
		f := newGCFixture(t, c, ns, "bg", false, false)
		// An unrelated Service, and one owned by a live owner, stay.
		bystander := service("bystander", api.ServiceTypeClusterIP, 80)
		if err := c.Create(ctxT(t, 10*time.Second), resServices, ns, bystander); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctxT(t, 10*time.Second), resDeploys, ns, f.owner.Name, client.DeleteOptions{PropagationPolicy: client.DeletePropagationBackground}); err != nil {
			t.Fatal(err)
		}
		gone(t, c, resDeploys, ns, f.owner.Name, 10*time.Second)
		for _, d := range f.dependents {
			gone(t, c, d.info, ns, d.name, 20*time.Second)
		}
		for _, ip := range f.ips {
			if ipaExists(t, c, ip) {
				t.Errorf("IPAddress %s of a collected Service is left", ip)
			}
		}
		exists(t, c, resServices, ns, "bystander")
	})

	t.Run("Foreground", func(t *testing.T) {
		f := newGCFixture(t, c, ns, "fg", true, true)
		if err := c.Delete(ctxT(t, 10*time.Second), resDeploys, ns, f.owner.Name, client.DeleteOptions{PropagationPolicy: client.DeletePropagationForeground}); err != nil {
			t.Fatal(err)
		}
		// Every dependent but the held Lease goes; the owner waits.
		for _, d := range f.dependents {
			if d.info == resLeases {
				continue
			}
			gone(t, c, d.info, ns, d.name, 20*time.Second)
		}
		o := exists(t, c, resDeploys, ns, f.owner.Name)
		if o.DeletionTimestamp == nil || !slices.Contains(o.Finalizers, "foregroundDeletion") {
			t.Fatalf("owner while a blocking dependent lives: deletionTimestamp %v finalizers %v", o.DeletionTimestamp, o.Finalizers)
		}
		l := exists(t, c, resLeases, ns, "fg-lease")
		if l.DeletionTimestamp == nil {
			t.Fatal("the held dependent was not deleted")
		}
		// Still waiting a moment later.
		time.Sleep(300 * time.Millisecond)
		exists(t, c, resDeploys, ns, f.owner.Name)

		dropFinalizers(t, c, resLeases, ns, "fg-lease")
		gone(t, c, resLeases, ns, "fg-lease", 10*time.Second)
		gone(t, c, resDeploys, ns, f.owner.Name, 20*time.Second)
	})

	t.Run("Orphan", func(t *testing.T) {
		f := newGCFixture(t, c, ns, "or", false, false)
		if err := c.Delete(ctxT(t, 10*time.Second), resDeploys, ns, f.owner.Name, client.DeleteOptions{PropagationPolicy: client.DeletePropagationOrphan}); err != nil {
			t.Fatal(err)
		}
		gone(t, c, resDeploys, ns, f.owner.Name, 20*time.Second)
		for _, d := range f.dependents {
			eventually(t, 10*time.Second, d.name+" loses its ownerReference", func() (bool, error) {
				var u client.Unstructured
				if err := c.Get(ctxT(t, 5*time.Second), d.info, ns, d.name, &u); err != nil {
					return false, err
				}
				return len(u.OwnerReferences) == 0, nil
			})
		}
		// And they stay.
		time.Sleep(500 * time.Millisecond)
		for _, d := range f.dependents {
			exists(t, c, d.info, ns, d.name)
		}
		for _, ip := range f.ips {
			if !ipaExists(t, c, ip) {
				t.Errorf("orphaned Service lost IPAddress %s", ip)
			}
		}
	})
	checkAllocations(t, c)
}
