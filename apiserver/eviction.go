package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/store"
)

// evictionBody is policy/v1 (and v1beta1) Eviction.
type evictionBody struct {
	api.TypeMeta  `json:",inline"`
	Metadata      api.ObjectMeta `json:"metadata"`
	DeleteOptions *deleteOptions `json:"deleteOptions,omitempty"`
}

// maxDisruptedPods is Kubernetes' MaxDisruptedPodSize: a budget with more
// evictions the disruption controller has not confirmed refuses more.
const maxDisruptedPods = 2000

// tooManyEvictions is the 429 of an eviction a budget refuses.
func tooManyEvictions(retryAfter int32, cause string) *StatusError {
	e := NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", retryAfter)
	e.status.Details.Causes = append(e.status.Details.Causes, api.StatusCause{Type: api.DisruptionBudgetCause, Message: cause})
	return e
}

// evict serves POST pods/{name}/eviction as Kubernetes' EvictionREST, in one
// store transaction (so no retries on conflict are needed):
//   - a pod that is Pending, Succeeded, Failed or already terminating is
//     deleted without looking at budgets;
//   - else the budgets of its namespace whose (non-empty) selector matches
//     it: more than one is a 500; with one, a pod that is not Ready is
//     deleted without a decrement when the budget's
//     unhealthyPodEvictionPolicy is AlwaysAllow, or (IfHealthyBudget, the
//     default) when currentHealthy >= desiredHealthy > 0; otherwise the
//     budget must have observed its generation and allow a disruption
//     (429 TooManyRequests with a DisruptionBudget cause when not), and
//     the eviction decrements disruptionsAllowed and records the pod in
//     disruptedPods (not on a dry run);
//   - then, unless on a dry run, the pod gets the DisruptionTarget
//     condition, and it is deleted with the body's deleteOptions (grace
//     period, preconditions, propagation); the answer is a Success Status.
func (h *handler) evict() {
	ctx := h.req.Context()
	fv, mt, body, err := h.readRequest()
	if err != nil {
		writeErr(h.w, err)
		return
	}
	var ev evictionBody
	warnings, err := decodeInto(mt, body, fv, &ev)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	addWarnings(h.w, warnings)
	switch {
	case ev.Kind != "" && ev.Kind != "Eviction":
		err = NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (Eviction)", ev.Kind))
	case ev.APIVersion != "" && ev.APIVersion != "policy/v1" && ev.APIVersion != "policy/v1beta1":
		err = NewBadRequest(fmt.Sprintf("unsupported apiVersion %q for Eviction (policy/v1 or policy/v1beta1)", ev.APIVersion))
	case ev.Metadata.Name != h.name:
		err = NewBadRequest("name in URL does not match name in Eviction object")
	case ev.Metadata.Namespace != "" && ev.Metadata.Namespace != h.ns:
		err = NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if err != nil {
		writeErr(h.w, err)
		return
	}
	opts := ev.DeleteOptions
	if opts == nil {
		opts = &deleteOptions{}
	}
	if err := validateDryRun("DeleteOptions", opts.DryRun); err != nil {
		writeErr(h.w, err)
		return
	}
	policy := "Background"
	switch {
	case opts.PropagationPolicy != nil:
		policy = *opts.PropagationPolicy
	case opts.OrphanDependents != nil && *opts.OrphanDependents:
		policy = "Orphan"
	case opts.OrphanDependents != nil:
		policy = "Foreground"
	}
	dry := isDryRun(h.req) || slices.Contains(opts.DryRun, dryRunAll)
	pdbRes := h.s.byQualified["poddisruptionbudgets.policy"]
	err = h.s.write(ctx, dry, func(tx store.Txn, run *hookRun) error {
		kv, err := h.storedIn(tx)
		if err != nil {
			return err
		}
		obj, err := h.r.decode(kv.Value)
		if err != nil {
			return err
		}
		pod, ok := obj.(*api.Pod)
		if !ok {
			return fmt.Errorf("apiserver: eviction of a %T", obj)
		}
		if !canIgnorePDB(pod) && pdbRes != nil {
			if err := h.chargeBudget(ctx, tx, run, pdbRes, pod, dry); err != nil {
				return err
			}
		}
		if !dry {
			if kv, err = h.markDisruptionTarget(ctx, tx, run, kv, pod, opts); err != nil {
				return err
			}
			// The preconditions held against the pod before the
			// condition; the delete is in the same transaction.
			o := *opts
			o.Preconditions = nil
			opts = &o
		}
		_, err = h.s.deleteStored(ctx, tx, run, h.r, kv, opts, policy)
		return err
	})
	if err != nil {
		writeErr(h.w, err)
		return
	}
	writeJSON(h.w, http.StatusCreated, api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   "Success",
		Code:     http.StatusCreated,
	})
}

// markDisruptionTarget adds the DisruptionTarget condition (True,
// EvictionByEvictionAPI, "Eviction API: evicting") to the pod's status
// before the delete, as Kubernetes' addConditionAndDeletePod, after
// checking the delete's preconditions against the pod as it is. It returns
// the pod's pending value in tx.
func (h *handler) markDisruptionTarget(ctx context.Context, tx store.Txn, run *hookRun, kv store.KeyValue, pod *api.Pod, opts *deleteOptions) (store.KeyValue, error) {
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
			//lint:ignore ST1005 kube-apiserver's exact text, which clients match
			return kv, NewConflict(h.r.qualified, pod.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, pod.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
			//lint:ignore ST1005 kube-apiserver's exact text, which clients match
			return kv, NewConflict(h.r.qualified, pod.Name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, pod.ResourceVersion))
		}
	}
	upd := api.DeepCopy(pod)
	now := api.NewTime(h.s.now())
	c := api.PodCondition{Type: "DisruptionTarget", Status: api.ConditionTrue, Reason: "EvictionByEvictionAPI",
		Message: "Eviction API: evicting", LastTransitionTime: now}
	found := false
	for i := range upd.Status.Conditions {
		if upd.Status.Conditions[i].Type == c.Type {
			if upd.Status.Conditions[i].Status == c.Status {
				c.LastTransitionTime = upd.Status.Conditions[i].LastTransitionTime
			}
			upd.Status.Conditions[i], found = c, true
		}
	}
	if !found {
		upd.Status.Conditions = append(upd.Status.Conditions, c)
	}
	if _, err := h.applyUpdate(ctx, tx, run, kv, upd, "status"); err != nil {
		return kv, err
	}
	nkv, ok, err := tx.Get(kv.Key)
	if err != nil {
		return kv, err
	}
	if !ok {
		return kv, NewNotFound(h.r.qualified, pod.Name)
	}
	return nkv, nil
}

// canIgnorePDB: evicting a pod that runs nothing yet, has ended or is
// already terminating disrupts nothing.
func canIgnorePDB(p *api.Pod) bool {
	switch p.Status.Phase {
	case api.PodSucceeded, api.PodFailed, api.PodPending:
		return true
	}
	return p.DeletionTimestamp != nil
}

// chargeBudget finds the pod's budget and, when the eviction counts
// against it, checks and decrements it inside tx.
func (h *handler) chargeBudget(ctx context.Context, tx store.Txn, run *hookRun, pdbRes *resource, pod *api.Pod, dry bool) error {
	kvs, err := tx.List(KeyFor(pdbRes.info, pod.Namespace, ""))
	if err != nil {
		return err
	}
	var matched []store.KeyValue
	var pdbs []*api.PodDisruptionBudget
	for _, kv := range kvs {
		o, err := pdbRes.decode(kv.Value)
		if err != nil {
			return err
		}
		p, ok := o.(*api.PodDisruptionBudget)
		if !ok {
			continue
		}
		// A null or empty selector matches nothing here (unlike in the
		// disruption controller), as in Kubernetes' eviction.
		sel := p.Spec.Selector
		if sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 || !api.SelectorMatches(sel, pod.Labels) {
			continue
		}
		matched, pdbs = append(matched, kv), append(pdbs, p)
	}
	switch {
	case len(pdbs) == 0:
		return nil
	case len(pdbs) > 1:
		return newStatusError(http.StatusInternalServerError, api.StatusReasonInternalError,
			"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.", nil)
	}
	pdb := pdbs[0]
	if !api.IsPodReady(pod) {
		if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == api.AlwaysAllowPolicy {
			return nil
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return nil
		}
	}
	st := &pdb.Status
	switch {
	case st.ObservedGeneration < pdb.Generation:
		return tooManyEvictions(10, fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
	case st.DisruptionsAllowed < 0:
		return NewForbidden("poddisruptionbudget.policy", pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	case len(st.DisruptedPods) > maxDisruptedPods:
		return NewForbidden("poddisruptionbudget.policy", pdb.Name, fmt.Errorf("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	case st.DisruptionsAllowed == 0:
		return tooManyEvictions(0, fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, st.DesiredHealthy, st.CurrentHealthy))
	}
	now := api.NewTime(h.s.now())
	st.DisruptionsAllowed--
	if st.DisruptionsAllowed == 0 {
		setBudgetCondition(st, now)
	}
	if dry {
		return nil
	}
	if st.DisruptedPods == nil {
		st.DisruptedPods = map[string]api.Time{}
	}
	st.DisruptedPods[pod.Name] = now
	ph := *h
	ph.r, ph.name = pdbRes, pdb.Name
	_, err = ph.applyUpdate(ctx, tx, run, matched[0], pdb, "status")
	return err
}

// setBudgetCondition turns DisruptionAllowed to False/InsufficientPods
// (the budget is used up), as Kubernetes' UpdateDisruptionAllowedCondition.
func setBudgetCondition(st *api.PodDisruptionBudgetStatus, now api.Time) {
	c := api.Condition{Type: api.DisruptionAllowedCondition, Status: api.ConditionFalse,
		Reason: api.InsufficientPodsReason, ObservedGeneration: st.ObservedGeneration, LastTransitionTime: now}
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}
