package api

// ---- PodDisruptionBudget and Eviction (policy/v1) ----

// Unhealthy pod eviction policies of a PodDisruptionBudget.
const (
	// IfHealthyBudgetPolicy: a running but not ready pod may be evicted
	// only while the application is not disrupted (currentHealthy >=
	// desiredHealthy). The default.
	IfHealthyBudgetPolicy = "IfHealthyBudget"
	// AlwaysAllowPolicy: a running but not ready pod may always be evicted.
	AlwaysAllowPolicy = "AlwaysAllow"
)

// PodDisruptionBudget condition type and reasons, as Kubernetes.
const (
	DisruptionAllowedCondition = "DisruptionAllowed"
	SyncFailedReason           = "SyncFailed"
	SufficientPodsReason       = "SufficientPods"
	InsufficientPodsReason     = "InsufficientPods"
	// DisruptionBudgetCause is the cause type of an eviction refused by a
	// budget.
	DisruptionBudgetCause = "DisruptionBudget"
)

// PodDisruptionBudget bounds the voluntary disruption of a set of pods.
type PodDisruptionBudget struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PodDisruptionBudgetSpec   `json:"spec,omitempty"`
	Status     PodDisruptionBudgetStatus `json:"status,omitempty"`
}

// PodDisruptionBudgetSpec is the budget: at most one of minAvailable and
// maxUnavailable (numbers or percents), over the pods selector matches (a
// null selector matches none, an empty one every pod of the namespace).
type PodDisruptionBudgetSpec struct {
	MinAvailable               *IntOrString   `json:"minAvailable,omitempty"`
	Selector                   *LabelSelector `json:"selector,omitempty"`
	MaxUnavailable             *IntOrString   `json:"maxUnavailable,omitempty"`
	UnhealthyPodEvictionPolicy *string        `json:"unhealthyPodEvictionPolicy,omitempty"`
}

// PodDisruptionBudgetStatus is what the disruption controller observed,
// and disruptedPods the evictions not yet seen deleted.
type PodDisruptionBudgetStatus struct {
	ObservedGeneration int64           `json:"observedGeneration,omitempty"`
	DisruptedPods      map[string]Time `json:"disruptedPods,omitempty"`
	DisruptionsAllowed int32           `json:"disruptionsAllowed"`
	CurrentHealthy     int32           `json:"currentHealthy"`
	DesiredHealthy     int32           `json:"desiredHealthy"`
	ExpectedPods       int32           `json:"expectedPods"`
	Conditions         []Condition     `json:"conditions,omitempty"`
}

// Eviction is the body of POST pods/{name}/eviction (policy/v1 and
// policy/v1beta1).
type Eviction struct {
	TypeMeta      `json:",inline"`
	ObjectMeta    `json:"metadata,omitempty"`
	DeleteOptions *DeleteOptions `json:"deleteOptions,omitempty"`
}

// DefaultPodDisruptionBudget has nothing to default in policy/v1; it
// exists for symmetry.
func DefaultPodDisruptionBudget(*PodDisruptionBudget) {}
