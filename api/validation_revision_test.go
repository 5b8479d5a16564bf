package api

import (
	"strings"
	"testing"
)

func TestValidateControllerRevision(t *testing.T) {
	ok := &ControllerRevision{ObjectMeta: ObjectMeta{Name: "web-5d8f", Namespace: "ns"}, Data: []byte(`{"spec":{"template":{"$patch":"replace"}}}`), Revision: 3}
	if errs := ValidateControllerRevision(ok); len(errs) != 0 {
		t.Fatalf("valid revision: %v", errs)
	}
	for _, tc := range []struct {
		name string
		mut  func(*ControllerRevision)
		want string
	}{
		{"negative revision", func(r *ControllerRevision) { r.Revision = -1 }, "revision"},
		{"data not an object", func(r *ControllerRevision) { r.Data = []byte(`[1]`) }, "data"},
		{"bad name", func(r *ControllerRevision) { r.Name = "Web_1" }, "metadata.name"},
	} {
		r := DeepCopy(ok)
		tc.mut(r)
		errs := ValidateControllerRevision(r)
		if len(errs) == 0 || !strings.Contains(errs.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.name, errs, tc.want)
		}
	}
	renumbered := DeepCopy(ok)
	renumbered.Revision = 7
	renumbered.Data = []byte(`{"spec": {"template": {"$patch": "replace"}}}`) // same value, other spacing
	if errs := ValidateControllerRevisionUpdate(renumbered, ok); len(errs) != 0 {
		t.Errorf("renumbering: %v", errs)
	}
	changed := DeepCopy(ok)
	changed.Data = []byte(`{"spec":{}}`)
	if errs := ValidateControllerRevisionUpdate(changed, ok); len(errs) == 0 || !strings.Contains(errs.Error(), "immutable") {
		t.Errorf("changed data: %v", errs)
	}
}
