package priorityadmission

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

func ptr[T any](v T) *T { return &v }

func class(name string, value int32, def bool, policy api.PreemptionPolicy) *api.PriorityClass {
	return &api.PriorityClass{ObjectMeta: api.ObjectMeta{Name: name}, Value: value, GlobalDefault: def, PreemptionPolicy: &policy}
}

// admit runs one write through the hook on a real bbolt store that holds
// classes.
func admit(t *testing.T, a apiserver.Admission, classes ...*api.PriorityClass) error {
	t.Helper()
	h, err := New(api.Resources())
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.MustOpenBolt(t)
	ctx := context.Background()
	if _, err := st.Update(ctx, func(tx store.Txn) error {
		for _, pc := range classes {
			b, _ := json.Marshal(pc)
			if err := tx.Put(apiserver.KeyFor(h.pcInfo, "", pc.Name), b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = st.Update(ctx, func(tx store.Txn) error {
		_, err := h.Admit(ctx, tx, a)
		return err
	})
	return err
}

func newPod(mods ...func(*api.Pod)) *api.Pod {
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: api.PodSpec{Containers: []api.Container{{Name: "a", Image: "x"}}}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func TestAdmitPod(t *testing.T) {
	system := api.SystemPriorityClasses()
	for _, pc := range system {
		api.DefaultPriorityClass(pc)
	}
	high := class("high", 1000, false, api.PreemptNever)
	tests := []struct {
		name       string
		pod        *api.Pod
		op         apiserver.Op
		classes    []*api.PriorityClass
		wantClass  string
		wantPrio   *int32
		wantPolicy *api.PreemptionPolicy
		wantErr    string
	}{
		{name: "named class", pod: newPod(func(p *api.Pod) { p.Spec.PriorityClassName = "system-node-critical" }), classes: system,
			wantClass: "system-node-critical", wantPrio: ptr[int32](2000001000), wantPolicy: ptr(api.PreemptLowerPriority)},
		{name: "class policy Never", pod: newPod(func(p *api.Pod) { p.Spec.PriorityClassName = "high" }), classes: []*api.PriorityClass{high},
			wantClass: "high", wantPrio: ptr[int32](1000), wantPolicy: ptr(api.PreemptNever)},
		{name: "unknown class is forbidden", pod: newPod(func(p *api.Pod) { p.Spec.PriorityClassName = "gold" }), classes: system,
			wantErr: `pods "p" is forbidden: no PriorityClass with name gold was found`},
		{name: "no class, no default: 0 and PreemptLowerPriority", pod: newPod(), classes: system,
			wantPrio: ptr[int32](0), wantPolicy: ptr(api.PreemptLowerPriority)},
		{name: "no class: the lowest global default", pod: newPod(),
			classes:   []*api.PriorityClass{class("d2", 50, true, api.PreemptNever), class("d1", 10, true, api.PreemptLowerPriority), high},
			wantClass: "d1", wantPrio: ptr[int32](10), wantPolicy: ptr(api.PreemptLowerPriority)},
		{name: "a priority that differs is forbidden", pod: newPod(func(p *api.Pod) { p.Spec.PriorityClassName, p.Spec.Priority = "high", ptr[int32](5) }),
			classes: []*api.PriorityClass{high},
			wantErr: "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"},
		{name: "the same priority is fine", pod: newPod(func(p *api.Pod) { p.Spec.PriorityClassName, p.Spec.Priority = "high", ptr[int32](1000) }),
			classes: []*api.PriorityClass{high}, wantClass: "high", wantPrio: ptr[int32](1000), wantPolicy: ptr(api.PreemptNever)},
		{name: "a preemptionPolicy that differs is forbidden", pod: newPod(func(p *api.Pod) {
			p.Spec.PriorityClassName, p.Spec.PreemptionPolicy = "high", ptr(api.PreemptLowerPriority)
		}), classes: []*api.PriorityClass{high},
			wantErr: "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name"},
		{name: "updates are left alone", op: apiserver.OpUpdate, pod: newPod(func(p *api.Pod) { p.Spec.PriorityClassName = "gold" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := tt.op
			if op == "" {
				op = apiserver.OpCreate
			}
			err := admit(t, apiserver.Admission{Op: op, Obj: tt.pod}, tt.classes...)
			if tt.wantErr != "" {
				var se *apiserver.StatusError
				if !errors.As(err, &se) || se.Code() != 403 || se.Reason() != api.StatusReasonForbidden || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want 403 %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := tt.pod.Spec
			if op == apiserver.OpUpdate {
				if s.Priority != nil || s.PreemptionPolicy != nil {
					t.Fatalf("update changed the pod: %+v", s)
				}
				return
			}
			if s.PriorityClassName != tt.wantClass || s.Priority == nil || *s.Priority != *tt.wantPrio ||
				s.PreemptionPolicy == nil || *s.PreemptionPolicy != *tt.wantPolicy {
				t.Fatalf("class %q priority %v policy %v", s.PriorityClassName, s.Priority, s.PreemptionPolicy)
			}
		})
	}
}

func TestAdmitPriorityClassSingleDefault(t *testing.T) {
	def := class("default", 10, true, api.PreemptLowerPriority)
	tests := []struct {
		name    string
		op      apiserver.Op
		obj     *api.PriorityClass
		classes []*api.PriorityClass
		wantErr string
	}{
		{name: "first default", op: apiserver.OpCreate, obj: class("a", 1, true, api.PreemptLowerPriority)},
		{name: "second default on create", op: apiserver.OpCreate, obj: class("a", 1, true, api.PreemptLowerPriority), classes: []*api.PriorityClass{def},
			wantErr: `priorityclasses.scheduling.k8s.io "a" is forbidden: PriorityClass default is already marked as default. Only one default can exist`},
		{name: "marking another default on update", op: apiserver.OpUpdate, obj: class("a", 1, true, api.PreemptLowerPriority),
			classes: []*api.PriorityClass{def, class("a", 1, false, api.PreemptLowerPriority)}, wantErr: "Only one default can exist"},
		{name: "updating the default itself", op: apiserver.OpUpdate, obj: class("default", 10, true, api.PreemptLowerPriority), classes: []*api.PriorityClass{def}},
		{name: "a non-default next to a default", op: apiserver.OpCreate, obj: class("a", 1, false, api.PreemptLowerPriority), classes: []*api.PriorityClass{def}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := admit(t, apiserver.Admission{Op: tt.op, Obj: tt.obj}, tt.classes...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *apiserver.StatusError
			if !errors.As(err, &se) || se.Code() != 403 || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want 403 %q", err, tt.wantErr)
			}
		})
	}
}
