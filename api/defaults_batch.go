package api

import "math"

// DefaultJob sets what Kubernetes' batch/v1 defaulting sets: parallelism
// and completions 1 when both are unset (parallelism 1 when only it is),
// backoffLimit 6 (MaxInt32 with backoffLimitPerIndex), completionMode
// NonIndexed, suspend false, a pod failure policy pattern's status True,
// podReplacementPolicy Failed with a pod failure policy and
// TerminatingOrFailed without, the Job's labels from its template's when
// it has none, and the pod template defaults.
func DefaultJob(j *Job) {
	DefaultJobSpec(&j.Spec)
	if j.Spec.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = make(map[string]string, len(j.Spec.Template.Labels))
		for k, v := range j.Spec.Template.Labels {
			j.Labels[k] = v
		}
	}
}

// DefaultJobSpec is DefaultJob's spec part (without the labels).
func DefaultJobSpec(s *JobSpec) {
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = ptrTo[int32](1)
		s.Parallelism = ptrTo[int32](1)
	}
	if s.Parallelism == nil {
		s.Parallelism = ptrTo[int32](1)
	}
	if s.BackoffLimit == nil {
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = ptrTo[int32](math.MaxInt32)
		} else {
			s.BackoffLimit = ptrTo[int32](6)
		}
	}
	if s.CompletionMode == nil {
		s.CompletionMode = ptrTo(NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = ptrTo(false)
	}
	if s.PodFailurePolicy != nil {
		for i := range s.PodFailurePolicy.Rules {
			r := &s.PodFailurePolicy.Rules[i]
			for k := range r.OnPodConditions {
				if r.OnPodConditions[k].Status == "" {
					r.OnPodConditions[k].Status = ConditionTrue
				}
			}
		}
	}
	if s.PodReplacementPolicy == nil {
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = ptrTo(FailedPodReplacement)
		} else {
			s.PodReplacementPolicy = ptrTo(TerminatingOrFailedPodReplacement)
		}
	}
	DefaultPodTemplateSpec(&s.Template)
}

// DefaultCronJob sets concurrencyPolicy Allow, suspend false, history
// limits 3 (successful) and 1 (failed), and the pod template defaults of
// its job template. As in Kubernetes, the job template's Job fields
// (parallelism, backoffLimit, ...) are not defaulted: the Job created
// from it is.
func DefaultCronJob(c *CronJob) {
	s := &c.Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = ptrTo(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = ptrTo[int32](3)
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = ptrTo[int32](1)
	}
	DefaultPodTemplateSpec(&s.JobTemplate.Spec.Template)
}

// PrepareJobForCreate generates the Job's selector and pod template labels
// as Kubernetes' Job strategy does, unless manualSelector is true: the
// template gets batch.kubernetes.io/controller-uid=<uid> and
// batch.kubernetes.io/job-name=<name> (and the legacy controller-uid and
// job-name) where it does not set them itself, and the selector gets
// matchLabels batch.kubernetes.io/controller-uid=<uid>. A user selector
// without manualSelector keeps its own terms and gains the uid term, which
// validation then rejects as "not auto-generated". It also clears the
// status.
func PrepareJobForCreate(j *Job) {
	j.Status = JobStatus{}
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	t := &j.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{LegacyJobNameLabel, JobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = j.Name
		}
	}
	for _, k := range []string{LegacyJobControllerUIDLabel, JobControllerUIDLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = j.UID
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[JobControllerUIDLabel]; !ok {
		j.Spec.Selector.MatchLabels[JobControllerUIDLabel] = j.UID
	}
}
