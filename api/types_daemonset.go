package api

// ---- DaemonSet (apps/v1) ----

// DaemonSet update strategy types.
const (
	RollingUpdateDaemonSetStrategyType = "RollingUpdate"
	OnDeleteDaemonSetStrategyType      = "OnDelete"
)

// DefaultDaemonSetUniqueLabelKey is the label a DaemonSet's pods (and
// ControllerRevisions) carry with the hash of the template that made them.
const DefaultDaemonSetUniqueLabelKey = "controller-revision-hash"

// DaemonSet runs one copy of a pod on every eligible node.
type DaemonSet struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       DaemonSetSpec   `json:"spec,omitempty"`
	Status     DaemonSetStatus `json:"status,omitempty"`
}

// DaemonSetSpec is the desired state of a DaemonSet.
type DaemonSetSpec struct {
	Selector             *LabelSelector          `json:"selector"`
	Template             PodTemplateSpec         `json:"template"`
	UpdateStrategy       DaemonSetUpdateStrategy `json:"updateStrategy,omitempty"`
	MinReadySeconds      int32                   `json:"minReadySeconds,omitempty"`
	RevisionHistoryLimit *int32                  `json:"revisionHistoryLimit,omitempty"`
}

// DaemonSetUpdateStrategy is RollingUpdate or OnDelete.
type DaemonSetUpdateStrategy struct {
	Type          string                  `json:"type,omitempty"`
	RollingUpdate *RollingUpdateDaemonSet `json:"rollingUpdate,omitempty"`
}

// RollingUpdateDaemonSet bounds a DaemonSet rolling update; numbers or
// percents of the nodes that should run the pod. Exactly one of the two is
// non-zero.
type RollingUpdateDaemonSet struct {
	MaxUnavailable *IntOrString `json:"maxUnavailable,omitempty"`
	MaxSurge       *IntOrString `json:"maxSurge,omitempty"`
}

// DaemonSetStatus is the observed state of a DaemonSet.
type DaemonSetStatus struct {
	CurrentNumberScheduled int32                `json:"currentNumberScheduled"`
	NumberMisscheduled     int32                `json:"numberMisscheduled"`
	DesiredNumberScheduled int32                `json:"desiredNumberScheduled"`
	NumberReady            int32                `json:"numberReady"`
	ObservedGeneration     int64                `json:"observedGeneration,omitempty"`
	UpdatedNumberScheduled int32                `json:"updatedNumberScheduled,omitempty"`
	NumberAvailable        int32                `json:"numberAvailable,omitempty"`
	NumberUnavailable      int32                `json:"numberUnavailable,omitempty"`
	CollisionCount         *int32               `json:"collisionCount,omitempty"`
	Conditions             []DaemonSetCondition `json:"conditions,omitempty"`
}

// DaemonSetCondition is one DaemonSet condition.
type DaemonSetCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// DefaultDaemonSet sets updateStrategy RollingUpdate with maxUnavailable 1
// and maxSurge 0, revisionHistoryLimit 10, and the pod template defaults,
// as Kubernetes' apps/v1 defaulting does.
func DefaultDaemonSet(d *DaemonSet) {
	spec := &d.Spec
	us := &spec.UpdateStrategy
	if us.Type == "" {
		us.Type = RollingUpdateDaemonSetStrategyType
	}
	if us.Type == RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &RollingUpdateDaemonSet{}
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = ptrTo(FromInt32(1))
		}
		if us.RollingUpdate.MaxSurge == nil {
			us.RollingUpdate.MaxSurge = ptrTo(FromInt32(0))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptrTo[int32](10)
	}
	DefaultPodTemplateSpec(&spec.Template)
}
