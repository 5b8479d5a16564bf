package api

// ---- Job and CronJob (batch/v1) ----

// Labels and annotations of batch/v1, as Kubernetes names them.
const (
	// JobControllerUIDLabel and JobNameLabel are put on a Job's pod
	// template (and so on its pods) when its selector is generated; the
	// selector matches JobControllerUIDLabel.
	JobControllerUIDLabel = "batch.kubernetes.io/controller-uid"
	JobNameLabel          = "batch.kubernetes.io/job-name"
	// LegacyJobControllerUIDLabel and LegacyJobNameLabel are the old
	// unprefixed names, still added next to the prefixed ones.
	LegacyJobControllerUIDLabel = "controller-uid"
	LegacyJobNameLabel          = "job-name"
	// JobCompletionIndexAnnotation holds an Indexed Job pod's index (also
	// set as a label of the same name).
	JobCompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index"
	// JobIndexFailureCountAnnotation and JobIndexIgnoredFailureCountAnnotation
	// count an index's failures when backoffLimitPerIndex is set.
	JobIndexFailureCountAnnotation        = "batch.kubernetes.io/job-index-failure-count"
	JobIndexIgnoredFailureCountAnnotation = "batch.kubernetes.io/job-index-ignored-failure-count"
	// JobTrackingFinalizer keeps a Job's pod until the Job controller has
	// counted it in the Job's status.
	JobTrackingFinalizer = "batch.kubernetes.io/job-tracking"
	// CronJobScheduledTimestampAnnotation is the RFC 3339 time a CronJob's
	// Job was scheduled for.
	CronJobScheduledTimestampAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"
	// CronJobInstantiateAnnotation is set to "manual" by
	// `kubectl create job --from=cronjob/X`.
	CronJobInstantiateAnnotation = "cronjob.kubernetes.io/instantiate"
)

// Completion modes.
const (
	NonIndexedCompletion = "NonIndexed"
	IndexedCompletion    = "Indexed"
)

// Pod replacement policies.
const (
	TerminatingOrFailedPodReplacement = "TerminatingOrFailed"
	FailedPodReplacement              = "Failed"
)

// Pod failure policy actions.
const (
	PodFailurePolicyActionFailJob   = "FailJob"
	PodFailurePolicyActionFailIndex = "FailIndex"
	PodFailurePolicyActionIgnore    = "Ignore"
	PodFailurePolicyActionCount     = "Count"
)

// Pod failure policy exit code operators.
const (
	PodFailurePolicyOnExitCodesOpIn    = "In"
	PodFailurePolicyOnExitCodesOpNotIn = "NotIn"
)

// Job condition types.
const (
	JobSuspended          = "Suspended"
	JobComplete           = "Complete"
	JobFailed             = "Failed"
	JobFailureTarget      = "FailureTarget"
	JobSuccessCriteriaMet = "SuccessCriteriaMet"
)

// Job condition reasons, as the Kubernetes Job controller writes them.
const (
	JobReasonBackoffLimitExceeded     = "BackoffLimitExceeded"
	JobReasonDeadlineExceeded         = "DeadlineExceeded"
	JobReasonPodFailurePolicy         = "PodFailurePolicy"
	JobReasonMaxFailedIndexesExceeded = "MaxFailedIndexesExceeded"
	JobReasonFailedIndexes            = "FailedIndexes"
	JobReasonSuccessPolicy            = "SuccessPolicy"
	JobReasonCompletionsReached       = "CompletionsReached"
	JobReasonSuspended                = "JobSuspended"
	JobReasonResumed                  = "JobResumed"
)

// Job runs pods until a number of them succeed.
type Job struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       JobSpec   `json:"spec,omitempty"`
	Status     JobStatus `json:"status,omitempty"`
}

// JobSpec is the desired state of a Job.
type JobSpec struct {
	Parallelism             *int32            `json:"parallelism,omitempty"`
	Completions             *int32            `json:"completions,omitempty"`
	ActiveDeadlineSeconds   *int64            `json:"activeDeadlineSeconds,omitempty"`
	PodFailurePolicy        *PodFailurePolicy `json:"podFailurePolicy,omitempty"`
	SuccessPolicy           *SuccessPolicy    `json:"successPolicy,omitempty"`
	BackoffLimit            *int32            `json:"backoffLimit,omitempty"`
	BackoffLimitPerIndex    *int32            `json:"backoffLimitPerIndex,omitempty"`
	MaxFailedIndexes        *int32            `json:"maxFailedIndexes,omitempty"`
	Selector                *LabelSelector    `json:"selector,omitempty"`
	ManualSelector          *bool             `json:"manualSelector,omitempty"`
	Template                PodTemplateSpec   `json:"template"`
	TTLSecondsAfterFinished *int32            `json:"ttlSecondsAfterFinished,omitempty"`
	CompletionMode          *string           `json:"completionMode,omitempty"`
	Suspend                 *bool             `json:"suspend,omitempty"`
	PodReplacementPolicy    *string           `json:"podReplacementPolicy,omitempty"`
	ManagedBy               *string           `json:"managedBy,omitempty"`
}

// PodFailurePolicy decides what a failed pod does to its Job.
type PodFailurePolicy struct {
	Rules []PodFailurePolicyRule `json:"rules"`
}

// PodFailurePolicyRule matches a failed pod by exit codes or conditions.
type PodFailurePolicyRule struct {
	Action          string                                   `json:"action"`
	OnExitCodes     *PodFailurePolicyOnExitCodesRequirement  `json:"onExitCodes,omitempty"`
	OnPodConditions []PodFailurePolicyOnPodConditionsPattern `json:"onPodConditions,omitempty"`
}

// PodFailurePolicyOnExitCodesRequirement matches terminated containers'
// exit codes.
type PodFailurePolicyOnExitCodesRequirement struct {
	ContainerName *string `json:"containerName,omitempty"`
	Operator      string  `json:"operator"`
	Values        []int32 `json:"values"`
}

// PodFailurePolicyOnPodConditionsPattern matches a pod condition.
type PodFailurePolicyOnPodConditionsPattern struct {
	Type   string          `json:"type"`
	Status ConditionStatus `json:"status,omitempty"`
}

// SuccessPolicy declares an Indexed Job succeeded before every index has.
type SuccessPolicy struct {
	Rules []SuccessPolicyRule `json:"rules"`
}

// SuccessPolicyRule is met when the listed indexes (or a count of them)
// have succeeded.
type SuccessPolicyRule struct {
	SucceededIndexes *string `json:"succeededIndexes,omitempty"`
	SucceededCount   *int32  `json:"succeededCount,omitempty"`
}

// JobStatus is the observed state of a Job.
type JobStatus struct {
	Conditions              []JobCondition           `json:"conditions,omitempty"`
	StartTime               *Time                    `json:"startTime,omitempty"`
	CompletionTime          *Time                    `json:"completionTime,omitempty"`
	Active                  int32                    `json:"active,omitempty"`
	Succeeded               int32                    `json:"succeeded,omitempty"`
	Failed                  int32                    `json:"failed,omitempty"`
	Terminating             *int32                   `json:"terminating,omitempty"`
	CompletedIndexes        string                   `json:"completedIndexes,omitempty"`
	FailedIndexes           *string                  `json:"failedIndexes,omitempty"`
	UncountedTerminatedPods *UncountedTerminatedPods `json:"uncountedTerminatedPods,omitempty"`
	Ready                   *int32                   `json:"ready,omitempty"`
}

// UncountedTerminatedPods are the UIDs of finished pods whose finalizer the
// controller removed but has not yet counted.
type UncountedTerminatedPods struct {
	Succeeded []string `json:"succeeded,omitempty"`
	Failed    []string `json:"failed,omitempty"`
}

// JobCondition is one Job condition.
type JobCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastProbeTime      Time            `json:"lastProbeTime,omitempty"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// Concurrency policies of a CronJob.
const (
	AllowConcurrent   = "Allow"
	ForbidConcurrent  = "Forbid"
	ReplaceConcurrent = "Replace"
)

// CronJob creates Jobs on a schedule.
type CronJob struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       CronJobSpec   `json:"spec,omitempty"`
	Status     CronJobStatus `json:"status,omitempty"`
}

// CronJobSpec is the desired state of a CronJob.
type CronJobSpec struct {
	Schedule                   string          `json:"schedule"`
	TimeZone                   *string         `json:"timeZone,omitempty"`
	StartingDeadlineSeconds    *int64          `json:"startingDeadlineSeconds,omitempty"`
	ConcurrencyPolicy          string          `json:"concurrencyPolicy,omitempty"`
	Suspend                    *bool           `json:"suspend,omitempty"`
	JobTemplate                JobTemplateSpec `json:"jobTemplate"`
	SuccessfulJobsHistoryLimit *int32          `json:"successfulJobsHistoryLimit,omitempty"`
	FailedJobsHistoryLimit     *int32          `json:"failedJobsHistoryLimit,omitempty"`
}

// JobTemplateSpec is the Job a CronJob creates.
type JobTemplateSpec struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       JobSpec `json:"spec,omitempty"`
}

// CronJobStatus is the observed state of a CronJob.
type CronJobStatus struct {
	Active             []ObjectReference `json:"active,omitempty"`
	LastScheduleTime   *Time             `json:"lastScheduleTime,omitempty"`
	LastSuccessfulTime *Time             `json:"lastSuccessfulTime,omitempty"`
}
