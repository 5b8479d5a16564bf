package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver/apiextensions"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

const testCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced",
  "names":{"plural":"widgets","kind":"Widget","shortNames":["wd"]},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

func testCRDObject(t *testing.T) *apiextensions.CustomResourceDefinition {
	t.Helper()
	var c apiextensions.CustomResourceDefinition
	if err := json.Unmarshal([]byte(testCRD), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestCustomResourcesServedAfterRestart: the definitions in the store are
// served again when the server starts over them, with their objects.
func TestCustomResourcesServedAfterRestart(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 60*time.Second)
	crdInfo := apiextensions.CRDResource(apiextensions.Options{})
	c := testCRDObject(t)
	if err := ts.Client().Create(ctx, crdInfo, "", c); err != nil {
		t.Fatal(err)
	}
	info := apiextensions.ResourceInfos(c)[0]
	w := &apiextensions.Object{Content: map[string]any{"spec": map[string]any{"size": json.Number("3")}}}
	w.Name = "a"
	if err := ts.Client().Create(ctx, info, "default", w); err != nil {
		t.Fatal(err)
	}
	ts.Restart()
	var got apiextensions.Object
	if err := ts.Client().Get(ctx, info, "default", "a", &got); err != nil {
		t.Fatalf("custom object not served after restart: %v", err)
	}
	if got.UID != w.UID || got.Content["spec"].(map[string]any)["size"] != json.Number("3") {
		t.Fatalf("custom object changed on restart: %+v, was %+v", got, w)
	}
}

// TestCustomObjectsInGCAndNamespaceDeletion: the garbage collector and
// the namespace controller take the served custom resources into account:
// a custom object owned by a ConfigMap goes with it, a ConfigMap owned by
// a custom object goes with its owner, and with the owner's definition,
// and deleting a namespace deletes its custom objects.
func TestCustomObjectsInGCAndNamespaceDeletion(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	ctx := ctxT(t, 60*time.Second)
	c := ts.Client()
	crdInfo := apiextensions.CRDResource(apiextensions.Options{})
	crd := testCRDObject(t)
	if err := c.Create(ctx, crdInfo, "", crd); err != nil {
		t.Fatal(err)
	}
	info := apiextensions.ResourceInfos(crd)[0]
	cms := api.Lookup(resources, "v1", "configmaps")
	mustCreateNS(t, c, "crs")

	gone := func(info *api.ResourceInfo, ns, name string) func() (bool, error) {
		return func() (bool, error) {
			var u client.Unstructured
			err := c.Get(ctx, info, ns, name, &u)
			if client.IsNotFound(err) {
				return true, nil
			}
			return false, err
		}
	}
	newWidget := func(name string, owners ...api.OwnerReference) *apiextensions.Object {
		w := &apiextensions.Object{Content: map[string]any{"spec": map[string]any{}}}
		w.Name, w.OwnerReferences = name, owners
		if err := c.Create(ctx, info, "crs", w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	newCM := func(name string, owners ...api.OwnerReference) *api.ConfigMap {
		cm := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: name, OwnerReferences: owners}}
		if err := c.Create(ctx, cms, "crs", cm); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	widgetRef := func(w *apiextensions.Object) api.OwnerReference {
		return api.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: w.Name, UID: w.UID}
	}

	// A custom object owned by a ConfigMap.
	owner := newCM("owner")
	newWidget("owned", api.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID})
	if err := c.Delete(ctx, cms, "crs", "owner", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the widget owned by a deleted ConfigMap collected", gone(info, "crs", "owned"))

	// A ConfigMap owned by a custom object.
	w := newWidget("parent")
	newCM("child", widgetRef(w))
	if err := c.Delete(ctx, info, "crs", "parent", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the ConfigMap owned by a deleted widget collected", gone(cms, "crs", "child"))

	// The owner's definition deleted: its objects go, and their dependents.
	w = newWidget("parent2")
	newCM("child2", widgetRef(w))
	if err := c.Delete(ctx, crdInfo, "", crd.Name, client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the ConfigMap owned by a widget whose definition was deleted collected", gone(cms, "crs", "child2"))

	// Namespace deletion empties custom resources too.
	crd = testCRDObject(t)
	if err := c.Create(ctx, crdInfo, "", crd); err != nil {
		t.Fatal(err)
	}
	newWidget("in-ns")
	if err := c.Delete(ctx, resNamespaces, "", "crs", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the namespace holding a widget deleted", gone(resNamespaces, "", "crs"))
	eventually(t, time.Second, "the widget of the deleted namespace gone", gone(info, "crs", "in-ns"))
}
