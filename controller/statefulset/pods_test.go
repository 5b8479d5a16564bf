package statefulset

import (
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func TestNewPod(t *testing.T) {
	set := testSet(3)
	set.Spec.Template.Annotations = map[string]string{"a": "b"}
	pod := newPod(set, 2, revA, &set.Spec.Template)
	if pod.Name != "web-2" || pod.Namespace != "ns" {
		t.Errorf("name %s/%s", pod.Namespace, pod.Name)
	}
	wantLabels := map[string]string{"app": "web", PodNameLabel: "web-2", PodIndexLabel: "2", RevisionLabel: revA}
	if len(pod.Labels) != len(wantLabels) {
		t.Errorf("labels %v, want %v", pod.Labels, wantLabels)
	}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("label %s=%q, want %q", k, pod.Labels[k], v)
		}
	}
	if pod.Annotations["a"] != "b" {
		t.Errorf("annotations %v", pod.Annotations)
	}
	ref := api.ControllerRef(&pod.ObjectMeta)
	if ref == nil || ref.Kind != "StatefulSet" || ref.APIVersion != "apps/v1" || ref.Name != "web" || ref.UID != "set-uid" ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("controller ref %+v", ref)
	}
	if pod.Spec.Hostname != "web-2" || pod.Spec.Subdomain != "nginx" {
		t.Errorf("hostname %q subdomain %q", pod.Spec.Hostname, pod.Spec.Subdomain)
	}
	if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Image != "nginx:1" {
		t.Errorf("containers %+v", pod.Spec.Containers)
	}
	// The template is not aliased.
	pod.Labels["app"] = "changed"
	pod.Spec.Containers[0].Image = "changed"
	pod.Annotations["a"] = "changed"
	if set.Spec.Template.Labels["app"] != "web" || set.Spec.Template.Spec.Containers[0].Image != "nginx:1" || set.Spec.Template.Annotations["a"] != "b" {
		t.Error("newPod aliases the set's template")
	}
	fresh := newPod(set, 0, revA, &set.Spec.Template)
	api.DefaultPod(fresh) // as the server does before validating
	if errs := api.ValidatePod(fresh); len(errs) > 0 {
		t.Errorf("pod does not validate: %v", errs)
	}
}

func TestRevisionName(t *testing.T) {
	a, err := revisionName(testSet(3))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, "web-") || strings.Trim(a[4:], safeAlphabet) != "" {
		t.Errorf("revision %q: want web-<safe-encoded hash>", a)
	}
	tests := []struct {
		name   string
		mutate func(*api.StatefulSet)
		same   bool
	}{
		{"replicas do not change it", func(s *api.StatefulSet) { n := int32(7); s.Spec.Replicas = &n }, true},
		{"partition does not change it", partition(2), true},
		{"image changes it", func(s *api.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:2" }, false},
		{"template label changes it", func(s *api.StatefulSet) { s.Spec.Template.Labels["v"] = "2" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSet(3)
			tt.mutate(s)
			b, err := revisionName(s)
			if err != nil {
				t.Fatal(err)
			}
			if (a == b) != tt.same {
				t.Errorf("revision %q vs %q, want same=%v", b, a, tt.same)
			}
		})
	}
	long := testSet(1)
	long.Name = strings.Repeat("x", 63)
	r, _ := revisionName(long)
	if len(r) > maxLabelValue {
		t.Errorf("revision of a long name is %d chars", len(r))
	}
}

func TestTemplateFor(t *testing.T) {
	set := testSet(3)
	set.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	old := mkPod(1, revA, "ready")
	old.Spec = api.PodSpec{Containers: []api.Container{{Name: "nginx", Image: "nginx:1"}}, NodeName: "n1", Hostname: "web-1", Subdomain: "nginx"}
	old.Labels[PodNameLabel], old.Labels[PodIndexLabel] = "web-1", "1"
	rev := revisions{current: revA, update: revB}

	tmpl, got := templateFor(set, []*api.Pod{old}, revA, rev, none)
	if got != revA || tmpl.Spec.Containers[0].Image != "nginx:1" {
		t.Fatalf("current revision: got %s image %s, want %s nginx:1", got, tmpl.Spec.Containers[0].Image, revA)
	}
	if tmpl.Spec.NodeName != "" || tmpl.Labels[PodNameLabel] != "" || tmpl.Labels[RevisionLabel] != "" || tmpl.Labels["app"] != "web" {
		t.Errorf("recovered template keeps pod identity: %+v labels %v", tmpl.Spec, tmpl.Labels)
	}
	p := newPod(set, 0, got, tmpl)
	if p.Spec.Hostname != "web-0" || p.Labels[PodNameLabel] != "web-0" || p.Labels[RevisionLabel] != revA {
		t.Errorf("pod from recovered template: hostname %s labels %v", p.Spec.Hostname, p.Labels)
	}

	tmpl, got = templateFor(set, []*api.Pod{old}, revB, rev, none)
	if got != revB || tmpl != &set.Spec.Template {
		t.Errorf("update revision: got %s, want the set's template", got)
	}
	tmpl, got = templateFor(set, nil, revA, rev, none)
	if got != revB || tmpl != &set.Spec.Template {
		t.Errorf("no pod of the current revision: got %s, want fallback to the update revision", got)
	}
	// A stored revision wins over the pods, and serves when none is left.
	stored := &api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "nginx", Image: "nginx:0"}}}}
	byName := func(name string) *api.PodTemplateSpec {
		if name == revA {
			return stored
		}
		return nil
	}
	for _, pods := range [][]*api.Pod{{old}, nil} {
		if tmpl, got = templateFor(set, pods, revA, rev, byName); got != revA || tmpl != stored {
			t.Errorf("with a stored revision (%d pods): got %s %v", len(pods), got, tmpl)
		}
	}
}

func none(string) *api.PodTemplateSpec { return nil }
