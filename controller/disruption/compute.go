package disruption

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// DeletionTimeout is how long a pod in status.disruptedPods (evicted, its
// delete not yet seen) is counted as gone; after it the controller assumes
// the delete did not happen, as Kubernetes' does.
const DeletionTimeout = 2 * time.Minute

// Owner is a pod's controller as the controller found it: its uid and
// scale (spec.replicas).
type Owner struct {
	UID   string
	Scale int32
}

// Input is what one sync of a budget looks at.
type Input struct {
	PDB *api.PodDisruptionBudget
	// Pods are the pods of the budget's namespace its selector matches.
	Pods []*api.Pod
	// Owners maps the name of each pod with a controller that has a
	// scale to that controller. A pod with a controller missing here has
	// a controller without a scale (a DaemonSet, say).
	Owners map[string]Owner
	Now    time.Time
}

// Result is the computed status, when to look again (a disruptedPods
// entry expiring), and the pods without a controller (Kubernetes records
// them in an UnmanagedPods Event).
type Result struct {
	Status    api.PodDisruptionBudgetStatus
	Recheck   time.Duration
	Unmanaged []string
}

// errNoController is the error of a pod whose controller has no scale.
var errNoController = errors.New("found no controllers")

// Compute is Kubernetes' disruption controller's trySync over in:
//   - expected pods and desired healthy: maxUnavailable: expected = the
//     sum of the scales of the pods' controllers, desired = expected -
//     maxUnavailable (percent of expected, rounded up), at least 0;
//     minAvailable as a number: expected = the matching pods, desired =
//     minAvailable; minAvailable as a percent: expected from the scales,
//     desired = the percent of it rounded up; neither set: 0 and 0.
//   - healthy: pods not terminating, not in disruptedPods (for
//     DeletionTimeout after their eviction) and Ready.
//   - disruptionsAllowed = healthy - desired, 0 when negative or when no
//     pod is expected.
//
// An error (a pod whose controller has no scale) is returned with the
// fail-safe status of Kubernetes' failSafe: disruptionsAllowed 0 and
// DisruptionAllowed False, reason SyncFailed.
func Compute(in Input) (Result, error) {
	pdb := in.PDB
	var res Result
	expected, desired, unmanaged, err := expectedPods(in)
	res.Unmanaged = unmanaged
	if err != nil {
		st := api.DeepCopy(pdb).Status
		st.DisruptionsAllowed = 0
		setCondition(&st, api.Condition{Type: api.DisruptionAllowedCondition, Status: api.ConditionFalse,
			Reason: api.SyncFailedReason, Message: err.Error(), ObservedGeneration: st.ObservedGeneration}, in.Now)
		res.Status = st
		return res, err
	}
	disrupted := map[string]api.Time{}
	var recheck time.Time
	for _, p := range in.Pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		at, ok := pdb.Status.DisruptedPods[p.Name]
		if !ok {
			continue
		}
		if exp := at.Add(DeletionTimeout); exp.After(in.Now) {
			disrupted[p.Name] = at
			if recheck.IsZero() || exp.Before(recheck) {
				recheck = exp
			}
		}
	}
	if !recheck.IsZero() {
		res.Recheck = recheck.Sub(in.Now)
	}
	var healthy int32
	for _, p := range in.Pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if _, ok := disrupted[p.Name]; ok {
			continue
		}
		if api.IsPodReady(p) {
			healthy++
		}
	}
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	st := api.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation,
		CurrentHealthy:     healthy,
		DesiredHealthy:     desired,
		ExpectedPods:       expected,
		DisruptionsAllowed: allowed,
		Conditions:         append([]api.Condition(nil), pdb.Status.Conditions...),
	}
	if len(disrupted) > 0 {
		st.DisruptedPods = disrupted
	}
	UpdateDisruptionAllowedCondition(&st, in.Now)
	res.Status = st
	return res, nil
}

func expectedPods(in Input) (expected, desired int32, unmanaged []string, err error) {
	spec := &in.PDB.Spec
	switch {
	case spec.MaxUnavailable != nil:
		expected, unmanaged, err = expectedScale(in)
		if err != nil {
			return
		}
		var n int
		n, err = api.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return
		}
		desired = max(0, expected-int32(n))
	case spec.MinAvailable != nil && spec.MinAvailable.Type == api.Int:
		desired = spec.MinAvailable.IntVal
		expected = int32(len(in.Pods))
	case spec.MinAvailable != nil:
		expected, unmanaged, err = expectedScale(in)
		if err != nil {
			return
		}
		var n int
		n, err = api.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(expected), true)
		if err != nil {
			return
		}
		desired = int32(n)
	}
	return
}

// expectedScale is the sum of the scales of the pods' controllers (each
// counted once); pods without a controller are listed, a controller
// without a scale is an error.
func expectedScale(in Input) (int32, []string, error) {
	scales := map[string]int32{}
	var unmanaged []string
	for _, p := range in.Pods {
		ref := api.ControllerRef(&p.ObjectMeta)
		if ref == nil {
			unmanaged = append(unmanaged, p.Name)
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		o, ok := in.Owners[p.Name]
		if !ok {
			return 0, unmanaged, fmt.Errorf("%w for pod %q", errNoController, p.Name)
		}
		scales[o.UID] = o.Scale
	}
	var sum int32
	for v := range maps.Values(scales) {
		sum += v
	}
	return sum, unmanaged, nil
}

// UpdateDisruptionAllowedCondition sets the DisruptionAllowed condition
// from disruptionsAllowed (True/SufficientPods when > 0, else
// False/InsufficientPods), as Kubernetes' pdb helper.
func UpdateDisruptionAllowedCondition(st *api.PodDisruptionBudgetStatus, now time.Time) {
	c := api.Condition{Type: api.DisruptionAllowedCondition, Status: api.ConditionFalse,
		Reason: api.InsufficientPodsReason, ObservedGeneration: st.ObservedGeneration}
	if st.DisruptionsAllowed > 0 {
		c.Status, c.Reason = api.ConditionTrue, api.SufficientPodsReason
	}
	setCondition(st, c, now)
}

// setCondition is apimachinery's meta.SetStatusCondition: the transition
// time moves only when the status changes.
func setCondition(st *api.PodDisruptionBudgetStatus, c api.Condition, now time.Time) {
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status != c.Status {
			old.Status = c.Status
			old.LastTransitionTime = api.Time{Time: now.UTC().Truncate(time.Second)}
		}
		old.Reason, old.Message, old.ObservedGeneration = c.Reason, c.Message, c.ObservedGeneration
		return
	}
	c.LastTransitionTime = api.Time{Time: now.UTC().Truncate(time.Second)}
	st.Conditions = append(st.Conditions, c)
}
