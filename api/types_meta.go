package api

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// ObjectReference points at another object (an Event's involvedObject, an
// endpoint's targetRef, a Binding's target).
type ObjectReference struct {
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	FieldPath       string `json:"fieldPath,omitempty"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	Name string `json:"name,omitempty"`
}

// LabelSelector is the structured selector of Deployments and StatefulSets.
// The requirements are ANDed. An empty (non-nil) selector matches every
// object; a nil *LabelSelector matches none (see SelectorMatches).
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorOperator is In, NotIn, Exists or DoesNotExist.
type LabelSelectorOperator string

const (
	LabelSelectorOpIn           LabelSelectorOperator = "In"
	LabelSelectorOpNotIn        LabelSelectorOperator = "NotIn"
	LabelSelectorOpExists       LabelSelectorOperator = "Exists"
	LabelSelectorOpDoesNotExist LabelSelectorOperator = "DoesNotExist"
)

// LabelSelectorRequirement is one matchExpressions entry.
type LabelSelectorRequirement struct {
	Key      string                `json:"key"`
	Operator LabelSelectorOperator `json:"operator"`
	Values   []string              `json:"values,omitempty"`
}

// SelectorMatches reports whether s selects an object with labels set, as
// Kubernetes' LabelSelectorAsSelector(s).Matches(set): nil selects nothing,
// an empty selector everything. A requirement with an unknown operator
// never matches (validation rejects it).
func SelectorMatches(s *LabelSelector, set map[string]string) bool {
	if s == nil {
		return false
	}
	for k, v := range s.MatchLabels {
		if got, ok := set[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range s.MatchExpressions {
		v, ok := set[r.Key]
		switch r.Operator {
		case LabelSelectorOpIn:
			if !ok || !slices.Contains(r.Values, v) {
				return false
			}
		case LabelSelectorOpNotIn:
			if ok && slices.Contains(r.Values, v) {
				return false
			}
		case LabelSelectorOpExists:
			if !ok {
				return false
			}
		case LabelSelectorOpDoesNotExist:
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// SelectorString renders s in the label-selector query syntax that
// labels.Parse reads ("app=web,tier in (a,b),!canary"), with requirements
// sorted by key as Kubernetes prints them (Scale's status.selector, kubectl
// describe). A nil or empty selector renders as "".
func SelectorString(s *LabelSelector) string {
	if s == nil {
		return ""
	}
	type req struct{ key, text string }
	var reqs []req
	for k, v := range s.MatchLabels {
		reqs = append(reqs, req{k, k + "=" + v})
	}
	for _, r := range s.MatchExpressions {
		vals := slices.Clone(r.Values)
		sort.Strings(vals)
		vals = slices.Compact(vals)
		var text string
		switch r.Operator {
		case LabelSelectorOpIn:
			text = r.Key + " in (" + strings.Join(vals, ",") + ")"
		case LabelSelectorOpNotIn:
			text = r.Key + " notin (" + strings.Join(vals, ",") + ")"
		case LabelSelectorOpExists:
			text = r.Key
		case LabelSelectorOpDoesNotExist:
			text = "!" + r.Key
		default:
			text = r.Key + " " + string(r.Operator) + " (" + strings.Join(vals, ",") + ")"
		}
		reqs = append(reqs, req{r.Key, text})
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].key < reqs[j].key })
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.text
	}
	return strings.Join(parts, ",")
}

// ConditionStatus is True, False or Unknown.
type ConditionStatus string

const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// Condition is the generic condition of newer APIs (metav1.Condition),
// used by ServiceCIDR and Service status.
type Condition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	ObservedGeneration int64           `json:"observedGeneration,omitempty"`
	LastTransitionTime Time            `json:"lastTransitionTime"`
	Reason             string          `json:"reason"`
	Message            string          `json:"message"`
}

// DeletionPropagation is how a delete treats dependents.
type DeletionPropagation string

const (
	DeletePropagationOrphan     DeletionPropagation = "Orphan"
	DeletePropagationBackground DeletionPropagation = "Background"
	DeletePropagationForeground DeletionPropagation = "Foreground"
)

// DeleteOptions is the optional body (or query) of a DELETE.
type DeleteOptions struct {
	TypeMeta           `json:",inline"`
	GracePeriodSeconds *int64               `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *Preconditions       `json:"preconditions,omitempty"`
	OrphanDependents   *bool                `json:"orphanDependents,omitempty"`
	PropagationPolicy  *DeletionPropagation `json:"propagationPolicy,omitempty"`
	DryRun             []string             `json:"dryRun,omitempty"`
}

// Preconditions must hold for a delete to proceed.
type Preconditions struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// Watch event types.
const (
	WatchAdded    = "ADDED"
	WatchModified = "MODIFIED"
	WatchDeleted  = "DELETED"
	WatchBookmark = "BOOKMARK"
	WatchError    = "ERROR"
)

// WatchEvent is one line of a watch stream.
type WatchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// Scale is the autoscaling/v1 scale subresource of Deployments and
// StatefulSets.
type Scale struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       ScaleSpec   `json:"spec,omitempty"`
	Status     ScaleStatus `json:"status,omitempty"`
}

// ScaleSpec is the desired replica count.
type ScaleSpec struct {
	Replicas int32 `json:"replicas,omitempty"`
}

// ScaleStatus is the observed replica count and the selector of the pods.
type ScaleStatus struct {
	Replicas int32 `json:"replicas"`
	// Selector is the label-query form of the pod selector (SelectorString).
	Selector string `json:"selector,omitempty"`
}

// Binding binds a pod to a node (POST pods/{name}/binding).
type Binding struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Target     ObjectReference `json:"target"`
}
