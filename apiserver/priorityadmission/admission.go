package priorityadmission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
)

// Hook is the admission hook for pods and priorityclasses. Build it with
// New.
type Hook struct {
	pcInfo *api.ResourceInfo
}

// New finds the priorityclasses resource in resources.
func New(resources []*api.ResourceInfo) (*Hook, error) {
	info := api.Lookup(resources, "scheduling.k8s.io/v1", "priorityclasses")
	if info == nil {
		return nil, errors.New("priorityadmission: resource table lacks priorityclasses")
	}
	return &Hook{pcInfo: info}, nil
}

// ValidatesOnly: a pod is changed only on create (see apiserver.ValidatingHook).
func (*Hook) ValidatesOnly() {}

// Admit implements apiserver.TxnHook.
func (h *Hook) Admit(_ context.Context, tx store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	if a.Subresource != "" {
		return apiserver.Outcome{}, nil
	}
	switch obj := a.Obj.(type) {
	case *api.Pod:
		if a.Op == apiserver.OpCreate {
			return apiserver.Outcome{}, h.admitPod(tx, obj)
		}
	case *api.PriorityClass:
		if a.Op == apiserver.OpCreate || a.Op == apiserver.OpUpdate {
			return apiserver.Outcome{}, h.admitClass(tx, obj, a.Op)
		}
	}
	return apiserver.Outcome{}, nil
}

func forbidden(resource, name, msg string) error {
	return apiserver.NewStatus(http.StatusForbidden, api.StatusReasonForbidden,
		fmt.Sprintf("%s %q is forbidden: %s", resource, name, msg))
}

func (h *Hook) admitPod(tx store.Txn, pod *api.Pod) error {
	var (
		priority int32
		policy   *api.PreemptionPolicy
	)
	if pod.Spec.PriorityClassName == "" {
		def, err := h.defaultClass(tx)
		if err != nil {
			return err
		}
		if def != nil {
			pod.Spec.PriorityClassName, priority, policy = def.Name, def.Value, def.PreemptionPolicy
		} else {
			p := api.PreemptLowerPriority
			policy = &p
		}
	} else {
		pc, err := h.class(tx, pod.Spec.PriorityClassName)
		if err != nil {
			return err
		}
		if pc == nil {
			return forbidden("pods", pod.Name, fmt.Sprintf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		priority, policy = pc.Value, pc.PreemptionPolicy
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return forbidden("pods", pod.Name, fmt.Sprintf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return forbidden("pods", pod.Name, fmt.Sprintf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		p := *policy
		pod.Spec.PreemptionPolicy = &p
	}
	return nil
}

func (h *Hook) admitClass(tx store.Txn, pc *api.PriorityClass, op apiserver.Op) error {
	if !pc.GlobalDefault {
		return nil
	}
	def, err := h.defaultClass(tx)
	if err != nil {
		return err
	}
	if def != nil && (op == apiserver.OpCreate || def.Name != pc.Name) {
		return forbidden("priorityclasses.scheduling.k8s.io", pc.Name,
			fmt.Sprintf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}

// class reads one PriorityClass; nil when absent.
func (h *Hook) class(tx store.Txn, name string) (*api.PriorityClass, error) {
	kv, ok, err := tx.Get(apiserver.KeyFor(h.pcInfo, "", name))
	if err != nil || !ok {
		return nil, err
	}
	var pc api.PriorityClass
	if err := json.Unmarshal(kv.Value, &pc); err != nil {
		return nil, fmt.Errorf("priorityadmission: decode %s: %w", kv.Key, err)
	}
	return &pc, nil
}

// defaultClass is the globalDefault class with the lowest value; nil when
// none is marked.
func (h *Hook) defaultClass(tx store.Txn) (*api.PriorityClass, error) {
	kvs, err := tx.List(apiserver.KeyFor(h.pcInfo, "", ""))
	if err != nil {
		return nil, err
	}
	var def *api.PriorityClass
	for _, kv := range kvs {
		var pc api.PriorityClass
		if err := json.Unmarshal(kv.Value, &pc); err != nil {
			return nil, fmt.Errorf("priorityadmission: decode %s: %w", kv.Key, err)
		}
		if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
			def = &pc
		}
	}
	return def, nil
}

// Chain runs hooks in order, stopping at the first error; the commit and
// abort callbacks of every hook run. It is a ValidatingHook when every
// hook is.
type Chain []apiserver.TxnHook

// Admit implements apiserver.TxnHook.
func (c Chain) Admit(ctx context.Context, tx store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	var outs []apiserver.Outcome
	all := func() apiserver.Outcome {
		return apiserver.Outcome{
			OnCommit: func() {
				for _, o := range outs {
					if o.OnCommit != nil {
						o.OnCommit()
					}
				}
			},
			OnAbort: func() {
				for _, o := range outs {
					if o.OnAbort != nil {
						o.OnAbort()
					}
				}
			},
		}
	}
	for _, h := range c {
		o, err := h.Admit(ctx, tx, a)
		outs = append(outs, o)
		if err != nil {
			return all(), err
		}
	}
	return all(), nil
}

// ValidatingChain is a Chain of ValidatingHooks.
type ValidatingChain struct{ Chain }

// ValidatesOnly marks the chain as an apiserver.ValidatingHook.
func (ValidatingChain) ValidatesOnly() {}
