package tainteviction

import (
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Plan is what one sync of a node does.
type Plan struct {
	// Evict are the pods to delete now.
	Evict []*api.Pod
	// Next is the earliest later deadline; zero when there is none.
	Next time.Time
}

// noExecute returns the node's NoExecute taints.
func noExecute(taints []api.Taint) []api.Taint {
	var out []api.Taint
	for _, t := range taints {
		if t.Effect == api.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// tolerates is Kubernetes' Toleration.ToleratesTaint.
func tolerates(t *api.Toleration, taint *api.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", "Equal":
		return t.Value == taint.Value
	case "Exists":
		return true
	}
	return false
}

// tolerationTime reports whether pod tolerates every taint and, if so, the
// smallest tolerationSeconds among the tolerations used (forever when
// none sets one).
func tolerationTime(pod *api.Pod, taints []api.Taint) (ok, forever bool, d time.Duration) {
	forever = true
	for i := range taints {
		found := false
		for j := range pod.Spec.Tolerations {
			tol := &pod.Spec.Tolerations[j]
			if !tolerates(tol, &taints[i]) {
				continue
			}
			found = true
			if tol.TolerationSeconds != nil {
				s := max(*tol.TolerationSeconds, 0)
				if forever || time.Duration(s)*time.Second < d {
					d = time.Duration(s) * time.Second
				}
				forever = false
			}
		}
		if !found {
			return false, false, 0
		}
	}
	return true, forever, d
}

// Decide is the plan for the pods of one node with the given taints:
// since holds, by pod uid, when each pod was first seen on the tainted
// node (the caller records now for pods it lacks).
func Decide(taints []api.Taint, pods []*api.Pod, since map[string]time.Time, now time.Time) Plan {
	var p Plan
	taints = noExecute(taints)
	if len(taints) == 0 {
		return p
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
			continue
		}
		ok, forever, d := tolerationTime(pod, taints)
		switch {
		case !ok:
			p.Evict = append(p.Evict, pod)
		case forever:
		default:
			start, seen := since[pod.UID]
			if !seen {
				start = now
			}
			at := start.Add(d)
			if !now.Before(at) {
				p.Evict = append(p.Evict, pod)
			} else if p.Next.IsZero() || at.Before(p.Next) {
				p.Next = at
			}
		}
	}
	return p
}
