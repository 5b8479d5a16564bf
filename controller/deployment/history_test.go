package deployment

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func tmpl(image string) api.PodTemplateSpec {
	return api.PodTemplateSpec{
		ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: image}}},
	}
}

func revs(h []Revision) string {
	parts := make([]string, len(h))
	for i, r := range h {
		parts[i] = fmt.Sprintf("%d:%s", r.Revision, r.Hash)
	}
	return strings.Join(parts, " ")
}

func hist(entries ...string) []Revision {
	var h []Revision
	for _, e := range entries {
		var r Revision
		fmt.Sscanf(strings.Replace(e, ":", " ", 1), "%d %s", &r.Revision, &r.Hash)
		r.Template = tmpl(r.Hash)
		h = append(h, r)
	}
	return h
}

func TestRecordRevision(t *testing.T) {
	cases := []struct {
		name        string
		h           []Revision
		hash        string
		limit       int32
		live        []string
		want        string
		wantChanged bool
	}{
		{"first revision", nil, "a", 10, nil, "1:a", true},
		{"same template", hist("1:a"), "a", 10, nil, "1:a", false},
		{"new template", hist("1:a"), "b", 10, nil, "1:a 2:b", true},
		{"rollback moves the revision up", hist("1:a", "2:b", "3:c"), "a", 10, nil, "2:b 3:c 4:a", true},
		{"trimmed to the limit", hist("1:a", "2:b", "3:c"), "d", 2, nil, "2:b 3:c 4:d", true},
		{"limit 0 keeps only the current revision", hist("1:a", "2:b"), "c", 0, nil, "3:c", true},
		{"revisions with pods are kept beyond the limit", hist("1:a", "2:b", "3:c"), "d", 1, []string{"a"}, "1:a 3:c 4:d", true},
		{"a lowered limit trims without a new revision", hist("1:a", "2:b", "3:c"), "c", 1, nil, "2:b 3:c", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live := map[string]bool{}
			for _, h := range tc.live {
				live[h] = true
			}
			got, changed := recordRevision(tc.h, tc.hash, tmpl(tc.hash), "", tc.limit, live)
			if revs(got) != tc.want || changed != tc.wantChanged {
				t.Errorf("history = %s (changed %v), want %s (changed %v)", revs(got), changed, tc.want, tc.wantChanged)
			}
			if got[len(got)-1].Template.Spec.Containers[0].Image != tc.hash {
				t.Errorf("current revision holds template %+v", got[len(got)-1].Template)
			}
		})
	}
}

func TestRecordRevisionChangeCause(t *testing.T) {
	h, _ := recordRevision(nil, "a", tmpl("a"), "kubectl set image", 10, nil)
	if h[0].ChangeCause != "kubectl set image" {
		t.Fatalf("change cause = %q", h[0].ChangeCause)
	}
	h2, changed := recordRevision(h, "a", tmpl("a"), "edited", 10, nil)
	if !changed || h2[0].ChangeCause != "edited" || h[0].ChangeCause != "kubectl set image" {
		t.Errorf("change cause update: %+v changed=%v (input mutated: %q)", h2, changed, h[0].ChangeCause)
	}
}

func TestTrimHistoryBoundsSize(t *testing.T) {
	big := strings.Repeat("x", 20<<10)
	var h []Revision
	for i := int64(1); i <= 6; i++ {
		r := Revision{Revision: i, Hash: fmt.Sprint(i), Template: tmpl(big)}
		h = append(h, r)
	}
	got := trimHistory(h, 10, nil)
	enc, err := encodeHistory(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) > maxHistoryBytes || len(got) == 0 || got[len(got)-1].Revision != 6 {
		t.Errorf("trimmed to %d revisions, %d bytes, last %d", len(got), len(enc), got[len(got)-1].Revision)
	}
	if len(got) != 3 {
		t.Errorf("kept %d revisions of 20 KiB under 64 KiB, want 3", len(got))
	}
}

func TestResolveRollback(t *testing.T) {
	h := hist("1:a", "3:c", "4:d")
	cases := []struct {
		name, value  string
		h            []Revision
		wantReason   string
		wantTemplate string // image of the installed template, "" = none
		wantRevision int64
	}{
		{"0 is the previous revision", "0", h, ReasonRollbackDone, "c", 3},
		{"an explicit revision", "1", h, ReasonRollbackDone, "a", 1},
		{"the current revision", "4", h, ReasonRollbackTemplateUnchanged, "", 4},
		{"a trimmed revision", "2", h, ReasonRollbackRevisionNotFound, "", 2},
		{"no previous revision", "0", hist("1:d"), ReasonRollbackRevisionNotFound, "", 0},
		{"not a number", "latest", h, ReasonRollbackRevisionNotFound, "", 0},
		{"negative", "-1", h, ReasonRollbackRevisionNotFound, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dec := resolveRollback("web", tc.value, tc.h, "d")
			img := ""
			if dec.template != nil {
				img = dec.template.Spec.Containers[0].Image
			}
			if dec.reason != tc.wantReason || img != tc.wantTemplate || dec.revision != tc.wantRevision {
				t.Errorf("decision = %s %q rev %d (%s), want %s %q rev %d", dec.reason, img, dec.revision, dec.message,
					tc.wantReason, tc.wantTemplate, tc.wantRevision)
			}
			if dec.message == "" {
				t.Error("no message")
			}
		})
	}
}

func TestHistoryAnnotation(t *testing.T) {
	d := &api.Deployment{}
	if h, err := History(d); err != nil || h != nil {
		t.Fatalf("no annotation: %v %v", h, err)
	}
	enc, err := encodeHistory(hist("3:c", "1:a"))
	if err != nil {
		t.Fatal(err)
	}
	d.Annotations = map[string]string{AnnotationRevisionHistory: enc}
	h, err := History(d)
	if err != nil || revs(h) != "1:a 3:c" {
		t.Fatalf("decoded %s, %v; want sorted 1:a 3:c", revs(h), err)
	}
	if h[1].Template.Spec.Containers[0].Image != "c" {
		t.Errorf("template lost: %+v", h[1].Template)
	}
	d.Annotations[AnnotationRevisionHistory] = "{not json"
	if _, err := History(d); err == nil {
		t.Error("bad annotation decoded")
	}
}

func TestTemplateHash(t *testing.T) {
	a := tmpl("nginx:1.25")
	h := TemplateHash(&a)
	if len(h) == 0 || len(h) > 10 {
		t.Fatalf("hash %q", h)
	}
	for _, r := range h {
		if !strings.ContainsRune(safeAlphabet, r) {
			t.Fatalf("hash %q has %q outside the safe alphabet", h, r)
		}
	}
	copied := api.DeepCopy(&api.Pod{ObjectMeta: a.ObjectMeta, Spec: a.Spec})
	b := api.PodTemplateSpec{ObjectMeta: copied.ObjectMeta, Spec: copied.Spec}
	if TemplateHash(&b) != h {
		t.Error("a copy hashes differently")
	}
	a.Labels = map[string]string{"app": "web"} // same content, new map
	if TemplateHash(&a) != h {
		t.Error("equal labels hash differently")
	}
	a.Annotations = map[string]string{"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z"}
	if TemplateHash(&a) == h {
		t.Error("restartedAt did not change the hash")
	}
	c := tmpl("nginx:1.26")
	if TemplateHash(&c) == h {
		t.Error("another image hashes alike")
	}
	// Kubernetes' SafeEncodeString mapping of the decimal digits.
	if got := safeEncode("0123456789"); got != "456789bcdf" {
		t.Errorf("safeEncode(digits) = %q", got)
	}
}

func TestPodNamePrefix(t *testing.T) {
	if got := podNamePrefix("web", "5d4f8"); got != "web-5d4f8-" {
		t.Errorf("prefix %q", got)
	}
	long := strings.Repeat("a", 70)
	if got := podNamePrefix(long, "5d4f8"); len(got) != maxGeneratedNameLength {
		t.Errorf("long prefix has %d characters", len(got))
	}
}

func TestNewPod(t *testing.T) {
	d := &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns", UID: "d-uid"}}
	tp := tmpl("nginx")
	tp.Annotations = map[string]string{"a": "b"}
	p, err := newPod(d, &tp, "hash1")
	if err != nil {
		t.Fatal(err)
	}
	if p.GenerateName != "web-hash1-" || p.Namespace != "ns" || p.Labels["app"] != "web" || p.Labels[LabelPodTemplateHash] != "hash1" || p.Annotations["a"] != "b" {
		t.Errorf("pod meta %+v", p.ObjectMeta)
	}
	ref := api.ControllerRef(&p.ObjectMeta)
	if ref == nil || ref.UID != "d-uid" || ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("owner %+v", p.OwnerReferences)
	}
	p.Spec.Containers[0].Image = "changed"
	p.Labels["x"] = "y"
	if tp.Spec.Containers[0].Image != "nginx" || tp.Labels["x"] != "" {
		t.Error("the pod shares memory with the template")
	}
}
