package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestPriorityClasses: the server starts with the two system
// PriorityClasses; a pod naming one gets its value in spec.priority, a pod
// naming none gets the global default, an unknown class is 403 Forbidden,
// a second global default is refused, an update without spec.priority
// keeps it, and kubectl prints upstream's columns for `get pc`
// (apiserver/priorityadmission).
func TestPriorityClasses(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{DisabledControllers: []string{"scheduler"}})
	c := ts.Client()
	ctx := ctxT(t, 30*time.Second)
	resPC := api.Lookup(resources, "scheduling.k8s.io/v1", "priorityclasses")
	resPods := api.Lookup(resources, "v1", "pods")
	eventually(t, 10*time.Second, "system priority classes", func() (bool, error) {
		var l api.PriorityClassList
		if err := c.List(ctx, resPC, "", client.ListOptions{}, &l); err != nil {
			return false, err
		}
		return len(l.Items) == 2, nil
	})
	var node api.PriorityClass
	if err := c.Get(ctx, resPC, "", api.SystemNodeCritical, &node); err != nil {
		t.Fatal(err)
	}
	if node.Value != 2000001000 || node.GlobalDefault || node.PreemptionPolicy == nil || *node.PreemptionPolicy != api.PreemptLowerPriority {
		t.Fatalf("system-node-critical: %+v", node)
	}
	pod := func(name, class string) *api.Pod {
		return &api.Pod{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.PodSpec{PriorityClassName: class,
			Containers: []api.Container{{Name: "c", Image: "nginx"}}}}
	}
	p := pod("critical", api.SystemClusterCritical)
	if err := c.Create(ctx, resPods, "default", p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.Priority == nil || *p.Spec.Priority != 2000000000 || p.Spec.PreemptionPolicy == nil {
		t.Fatalf("critical pod: priority %v policy %v", p.Spec.Priority, p.Spec.PreemptionPolicy)
	}
	err := c.Create(ctx, resPods, "default", pod("gold", "gold"))
	if !client.IsForbidden(err) || !strings.Contains(err.Error(), "no PriorityClass with name gold was found") {
		t.Fatalf("unknown class: %v", err)
	}
	never := api.PreemptNever
	def := &api.PriorityClass{ObjectMeta: api.ObjectMeta{Name: "batch"}, Value: 100, GlobalDefault: true, PreemptionPolicy: &never}
	if err := c.Create(ctx, resPC, "", def); err != nil {
		t.Fatal(err)
	}
	err = c.Create(ctx, resPC, "", &api.PriorityClass{ObjectMeta: api.ObjectMeta{Name: "other"}, Value: 1, GlobalDefault: true})
	if !client.IsForbidden(err) || !strings.Contains(err.Error(), "Only one default can exist") {
		t.Fatalf("second default: %v", err)
	}
	plain := pod("plain", "")
	if err := c.Create(ctx, resPods, "default", plain); err != nil {
		t.Fatal(err)
	}
	if plain.Spec.PriorityClassName != "batch" || plain.Spec.Priority == nil || *plain.Spec.Priority != 100 ||
		plain.Spec.PreemptionPolicy == nil || *plain.Spec.PreemptionPolicy != api.PreemptNever {
		t.Fatalf("defaulted pod: %+v", plain.Spec)
	}
	// An update that leaves spec.priority out keeps it.
	plain.Spec.Priority, plain.Spec.PreemptionPolicy = nil, nil
	plain.Labels = map[string]string{"x": "y"}
	if err := c.Update(ctx, resPods, "default", plain); err != nil {
		t.Fatal(err)
	}
	if plain.Spec.Priority == nil || *plain.Spec.Priority != 100 {
		t.Fatalf("updated pod lost its priority: %v", plain.Spec.Priority)
	}

	out := endpointsKubectl(t, ts, "get", "pc")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || strings.Join(strings.Fields(lines[0]), " ") != "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "batch 100 true ") ||
		!strings.HasSuffix(lines[1], "Never") {
		t.Fatalf("kubectl get pc:\n%s", out)
	}
}
