package deployment

import (
	"fmt"

	"github.com/skiff-dev/skiff/api"
)

// maxBurst caps the pods created or deleted in one sync, as Kubernetes'
// burstReplicas does; the next sync continues.
const maxBurst = 500

// bounds are a Deployment's resolved rolling-update bounds.
type bounds struct {
	surge       int32 // pods allowed above replicas
	unavailable int32 // pods allowed below replicas
}

// resolveBounds resolves maxSurge (rounded up) and maxUnavailable (rounded
// down) against spec.replicas, as Kubernetes' MaxSurge and MaxUnavailable:
// Recreate has no bounds; when both resolve to 0, maxUnavailable is 1;
// maxUnavailable is at most replicas, and 0 when replicas is 0.
func resolveBounds(d *api.Deployment) (bounds, error) {
	s := d.Spec.Strategy
	if s.Type == api.RecreateDeploymentStrategyType {
		return bounds{}, nil
	}
	replicas := int(replicasOf(d))
	var surge, unavail int
	var err error
	if s.RollingUpdate != nil && s.RollingUpdate.MaxSurge != nil {
		if surge, err = s.RollingUpdate.MaxSurge.ScaledValue(replicas, true); err != nil {
			return bounds{}, fmt.Errorf("deployment: spec.strategy.rollingUpdate.maxSurge: %w", err)
		}
	}
	if s.RollingUpdate != nil && s.RollingUpdate.MaxUnavailable != nil {
		if unavail, err = s.RollingUpdate.MaxUnavailable.ScaledValue(replicas, false); err != nil {
			return bounds{}, fmt.Errorf("deployment: spec.strategy.rollingUpdate.maxUnavailable: %w", err)
		}
	}
	surge, unavail = max(surge, 0), max(unavail, 0)
	if surge == 0 && unavail == 0 {
		unavail = 1
	}
	unavail = min(unavail, replicas)
	return bounds{surge: int32(surge), unavailable: int32(unavail)}, nil
}

// replicasOf is spec.replicas (defaulted to 1 by the server).
func replicasOf(d *api.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// planInput is everything one planning round looks at.
type planInput struct {
	replicas int32
	recreate bool
	bounds   bounds
	paused   bool
	// newHash is the hash of spec.template.
	newHash string
	// pods are the Deployment's active pods (Succeeded and Failed ones
	// left out), terminating ones included and marked.
	pods []podState
}

// creation asks for count pods of the template with hash.
type creation struct {
	hash  string
	count int
}

// plan is one round's actions. At most one of create and delete is set,
// except that an empty plan has neither.
type plan struct {
	create *creation
	// delete names the pods to delete, in order.
	delete []string
}

func (p plan) empty() bool { return p.create == nil && len(p.delete) == 0 }

// computePlan decides one round: which pods to create and which to delete.
// It is pure; the caller applies the plan and, once the cache shows the
// effect (expectations), plans the next round.
func computePlan(in planInput) plan {
	var newPods, oldPods []*podState
	oldTerminating := 0
	for i := range in.pods {
		p := &in.pods[i]
		switch {
		case p.terminating:
			if p.hash != in.newHash {
				oldTerminating++
			}
		case p.hash == in.newHash:
			newPods = append(newPods, p)
		default:
			oldPods = append(oldPods, p)
		}
	}
	var out plan
	switch {
	case in.paused:
		out = planPaused(in, newPods, oldPods)
	case in.recreate:
		out = planRecreate(in, newPods, oldPods, oldTerminating)
	default:
		out = planRolling(in, newPods, oldPods)
	}
	if out.create != nil {
		out.create.count = min(out.create.count, maxBurst)
	}
	if len(out.delete) > maxBurst {
		out.delete = out.delete[:maxBurst]
	}
	return out
}

// names lists the first n pods' names.
func names(pods []*podState, n int) []string {
	n = min(n, len(pods))
	out := make([]string, 0, n)
	for _, p := range pods[:n] {
		out = append(out, p.name)
	}
	return out
}

// scaleTo brings one group of pods (all of one hash) to want.
func scaleTo(pods []*podState, hash string, want int) plan {
	switch diff := len(pods) - want; {
	case diff > 0:
		sortForDeletion(pods)
		return plan{delete: names(pods, diff)}
	case diff < 0:
		return plan{create: &creation{hash: hash, count: -diff}}
	}
	return plan{}
}

// planPaused only scales: no new revision is rolled out. Scale-down takes
// pods in cmpDelete order whatever their revision; scale-up adds pods of
// the newest revision that has pods. A paused Deployment without pods gets
// none, as in Kubernetes (no ReplicaSet is created while paused).
func planPaused(in planInput, newPods, oldPods []*podState) plan {
	all := append(append([]*podState(nil), newPods...), oldPods...)
	want := int(in.replicas)
	switch diff := len(all) - want; {
	case diff > 0:
		sortForDeletion(all)
		return plan{delete: names(all, diff)}
	case diff < 0 && len(all) > 0:
		hash := in.newHash
		if len(newPods) == 0 {
			best := oldPods[0]
			for _, p := range oldPods[1:] {
				if p.revision > best.revision {
					best = p
				}
			}
			hash = best.hash
		}
		return plan{create: &creation{hash: hash, count: -diff}}
	}
	return plan{}
}

// planRecreate deletes every old pod, waits until none is left (not even
// terminating), then scales the new pods to replicas.
func planRecreate(in planInput, newPods, oldPods []*podState, oldTerminating int) plan {
	if len(oldPods) > 0 {
		sortOldForDeletion(oldPods)
		return plan{delete: names(oldPods, len(oldPods))}
	}
	if oldTerminating > 0 {
		return plan{}
	}
	return scaleTo(newPods, in.newHash, int(in.replicas))
}

// planRolling is Kubernetes' rolloutRolling on pods instead of
// ReplicaSets:
//
//   - new pods above replicas are deleted; below, new pods are created up
//     to min(replicas - new, replicas + maxSurge - total);
//   - otherwise old pods are deleted: first unavailable ones, up to
//     total - minAvailable - (new pods not yet available), then as many
//     as keep availableReplicas >= replicas - maxUnavailable, oldest
//     revision first.
//
// Scaling the new pods ends the round, as in Kubernetes; the old pods are
// looked at in the next round, once the cache shows the new ones.
func planRolling(in planInput, newPods, oldPods []*podState) plan {
	replicas := int(in.replicas)
	total := len(newPods) + len(oldPods)
	switch n := len(newPods); {
	case n > replicas:
		sortForDeletion(newPods)
		return plan{delete: names(newPods, n-replicas)}
	case n < replicas:
		up := min(replicas-n, replicas+int(in.bounds.surge)-total)
		if up > 0 {
			return plan{create: &creation{hash: in.newHash, count: up}}
		}
	}
	if len(oldPods) == 0 {
		return plan{}
	}
	minAvailable := replicas - int(in.bounds.unavailable)
	available, newUnavailable := 0, 0
	for _, p := range newPods {
		if p.available {
			available++
		} else {
			newUnavailable++
		}
	}
	for _, p := range oldPods {
		if p.available {
			available++
		}
	}
	maxScaledDown := total - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return plan{}
	}
	sortOldForDeletion(oldPods)
	var out plan
	// Unhealthy old pods first: deleting them costs no availability.
	var rest []*podState
	for _, p := range oldPods {
		if !p.available && len(out.delete) < maxScaledDown {
			out.delete = append(out.delete, p.name)
			continue
		}
		rest = append(rest, p)
	}
	if available > minAvailable {
		out.delete = append(out.delete, names(rest, available-minAvailable)...)
	}
	return out
}
