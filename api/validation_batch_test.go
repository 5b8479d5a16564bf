package api

import (
	"strings"
	"testing"
)

// validJob is a Job as the API stores it: uid assigned, selector and
// labels generated, defaults applied.
func validJob() *Job {
	j := &Job{
		ObjectMeta: ObjectMeta{Name: "pi", Namespace: "default", UID: "uid-1"},
		Spec:       JobSpec{Template: PodTemplateSpec{Spec: validPodSpec()}},
	}
	j.Spec.Template.Spec.RestartPolicy = RestartPolicyNever
	PrepareJobForCreate(j)
	DefaultJob(j)
	return j
}

func validCronJob() *CronJob {
	c := &CronJob{
		ObjectMeta: ObjectMeta{Name: "backup-daily", Namespace: "default"},
		Spec: CronJobSpec{
			Schedule:    "0 3 * * *",
			JobTemplate: JobTemplateSpec{Spec: JobSpec{Template: PodTemplateSpec{Spec: validPodSpec()}}},
		},
	}
	c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = RestartPolicyOnFailure
	DefaultCronJob(c)
	return c
}

func TestDefaultJob(t *testing.T) {
	j := &Job{ObjectMeta: ObjectMeta{Name: "pi", UID: "u"}, Spec: JobSpec{Template: PodTemplateSpec{Spec: validPodSpec()}}}
	PrepareJobForCreate(j)
	DefaultJob(j)
	s := j.Spec
	if *s.Parallelism != 1 || *s.Completions != 1 || *s.BackoffLimit != 6 || *s.CompletionMode != NonIndexedCompletion ||
		*s.Suspend || *s.PodReplacementPolicy != TerminatingOrFailedPodReplacement || s.ManualSelector != nil {
		t.Fatalf("defaults: %+v", s)
	}
	want := map[string]string{JobControllerUIDLabel: "u", JobNameLabel: "pi", LegacyJobControllerUIDLabel: "u", LegacyJobNameLabel: "pi"}
	if !semanticEqual(s.Template.Labels, want) || !semanticEqual(j.Labels, want) {
		t.Fatalf("labels: template %v job %v", s.Template.Labels, j.Labels)
	}
	if !semanticEqual(s.Selector, &LabelSelector{MatchLabels: map[string]string{JobControllerUIDLabel: "u"}}) {
		t.Fatalf("selector %+v", s.Selector)
	}

	// Only parallelism set: completions stays nil (a work queue Job).
	q := &Job{Spec: JobSpec{Parallelism: ptrTo[int32](3)}}
	DefaultJob(q)
	if q.Spec.Completions != nil || *q.Spec.Parallelism != 3 {
		t.Fatalf("work queue: %+v", q.Spec)
	}
	// Only completions set: parallelism 1.
	c := &Job{Spec: JobSpec{Completions: ptrTo[int32](5), BackoffLimitPerIndex: ptrTo[int32](1)}}
	DefaultJob(c)
	if *c.Spec.Parallelism != 1 || *c.Spec.BackoffLimit != 1<<31-1 {
		t.Fatalf("completions only: %+v", c.Spec)
	}
	// A pod failure policy: pattern status True, replacement Failed.
	p := &Job{Spec: JobSpec{PodFailurePolicy: &PodFailurePolicy{Rules: []PodFailurePolicyRule{{
		Action: PodFailurePolicyActionIgnore, OnPodConditions: []PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget"}}}}}}}
	DefaultJob(p)
	if p.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status != ConditionTrue || *p.Spec.PodReplacementPolicy != FailedPodReplacement {
		t.Fatalf("pod failure policy: %+v", p.Spec)
	}
	// Job labels the user set are kept.
	l := &Job{ObjectMeta: ObjectMeta{Labels: map[string]string{"team": "a"}}, Spec: JobSpec{Template: PodTemplateSpec{ObjectMeta: ObjectMeta{Labels: map[string]string{"x": "y"}}}}}
	DefaultJob(l)
	if !semanticEqual(l.Labels, map[string]string{"team": "a"}) {
		t.Fatalf("labels: %v", l.Labels)
	}
	// manualSelector: nothing generated.
	m := &Job{ObjectMeta: ObjectMeta{Name: "m", UID: "u"}, Spec: JobSpec{ManualSelector: ptrTo(true)}}
	PrepareJobForCreate(m)
	if m.Spec.Selector != nil || m.Spec.Template.Labels != nil {
		t.Fatalf("manual selector generated: %+v", m.Spec)
	}
}

func TestDefaultCronJob(t *testing.T) {
	c := &CronJob{Spec: CronJobSpec{Schedule: "@hourly"}}
	DefaultCronJob(c)
	s := c.Spec
	if s.ConcurrencyPolicy != AllowConcurrent || *s.Suspend || *s.SuccessfulJobsHistoryLimit != 3 || *s.FailedJobsHistoryLimit != 1 {
		t.Fatalf("defaults: %+v", s)
	}
	if s.JobTemplate.Spec.BackoffLimit != nil || s.JobTemplate.Spec.Template.Spec.DNSPolicy != DNSClusterFirst {
		t.Fatalf("job template: %+v", s.JobTemplate.Spec)
	}
}

func TestValidateJob(t *testing.T) {
	indexed := func(j *Job) {
		j.Spec.CompletionMode = ptrTo(IndexedCompletion)
		j.Spec.Completions = ptrTo[int32](4)
	}
	tests := []struct {
		name   string
		mutate func(*Job)
		want   []string
	}{
		{name: "valid", mutate: func(*Job) {}},
		{name: "valid OnFailure", mutate: func(j *Job) { j.Spec.Template.Spec.RestartPolicy = RestartPolicyOnFailure }},
		{name: "valid indexed", mutate: indexed},
		{name: "valid work queue", mutate: func(j *Job) { j.Spec.Completions = nil; j.Spec.Parallelism = ptrTo[int32](5) }},
		{name: "valid manual selector", mutate: func(j *Job) {
			j.Spec.ManualSelector = ptrTo(true)
			j.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"app": "pi"}}
			j.Spec.Template.Labels = map[string]string{"app": "pi"}
		}},
		{name: "valid pod failure policy", mutate: func(j *Job) {
			j.Spec.PodFailurePolicy = &PodFailurePolicy{Rules: []PodFailurePolicyRule{
				{Action: PodFailurePolicyActionFailJob, OnExitCodes: &PodFailurePolicyOnExitCodesRequirement{ContainerName: ptrTo("web"), Operator: "In", Values: []int32{1, 42}}},
				{Action: PodFailurePolicyActionIgnore, OnPodConditions: []PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget", Status: ConditionTrue}}},
			}}
			j.Spec.PodReplacementPolicy = ptrTo(FailedPodReplacement)
		}},
		{name: "valid success policy", mutate: func(j *Job) {
			indexed(j)
			j.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{{SucceededIndexes: ptrTo("0,2-3"), SucceededCount: ptrTo[int32](2)}}}
		}},
		{name: "valid backoff per index", mutate: func(j *Job) {
			indexed(j)
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = ptrTo[int32](1), ptrTo[int32](2)
		}},

		{name: "restartPolicy Always", mutate: func(j *Job) { j.Spec.Template.Spec.RestartPolicy = RestartPolicyAlways },
			want: []string{"FieldValueRequired spec.template.spec.restartPolicy"}},
		{name: "negative counts", mutate: func(j *Job) {
			j.Spec.Parallelism, j.Spec.Completions, j.Spec.BackoffLimit = ptrTo[int32](-1), ptrTo[int32](-1), ptrTo[int32](-1)
			j.Spec.ActiveDeadlineSeconds, j.Spec.TTLSecondsAfterFinished = ptrTo[int64](-1), ptrTo[int32](-1)
		}, want: []string{"FieldValueInvalid spec.parallelism", "FieldValueInvalid spec.completions", "FieldValueInvalid spec.activeDeadlineSeconds",
			"FieldValueInvalid spec.backoffLimit", "FieldValueInvalid spec.ttlSecondsAfterFinished"}},
		{name: "bad completion mode", mutate: func(j *Job) { j.Spec.CompletionMode = ptrTo("Sometimes") },
			want: []string{"FieldValueNotSupported spec.completionMode"}},
		{name: "indexed without completions", mutate: func(j *Job) { indexed(j); j.Spec.Completions = nil },
			want: []string{"FieldValueRequired spec.completions"}},
		{name: "indexed parallelism too large", mutate: func(j *Job) { indexed(j); j.Spec.Parallelism = ptrTo[int32](100001) },
			want: []string{"FieldValueInvalid spec.parallelism"}},
		{name: "indexed hostname too long", mutate: func(j *Job) { indexed(j); j.Name = strings.Repeat("a", 62) },
			want: []string{"FieldValueInvalid metadata.name",
				"FieldValueInvalid spec.template.metadata.labels[batch.kubernetes.io/job-name]", "FieldValueInvalid spec.template.metadata.labels[job-name]"}},
		{name: "backoffLimitPerIndex needs Indexed", mutate: func(j *Job) { j.Spec.BackoffLimitPerIndex = ptrTo[int32](1) },
			want: []string{"FieldValueForbidden spec.backoffLimitPerIndex"}},
		{name: "maxFailedIndexes needs backoffLimitPerIndex", mutate: func(j *Job) { indexed(j); j.Spec.MaxFailedIndexes = ptrTo[int32](1) },
			want: []string{"FieldValueRequired spec.backoffLimitPerIndex"}},
		{name: "maxFailedIndexes above completions", mutate: func(j *Job) {
			indexed(j)
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = ptrTo[int32](1), ptrTo[int32](5)
		}, want: []string{"FieldValueInvalid spec.maxFailedIndexes"}},
		{name: "backoffLimitPerIndex with OnFailure", mutate: func(j *Job) {
			indexed(j)
			j.Spec.BackoffLimitPerIndex = ptrTo[int32](1)
			j.Spec.Template.Spec.RestartPolicy = RestartPolicyOnFailure
		}, want: []string{"FieldValueInvalid spec.template.spec.restartPolicy"}},
		{name: "success policy needs Indexed", mutate: func(j *Job) {
			j.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{{SucceededCount: ptrTo[int32](1)}}}
		}, want: []string{"FieldValueInvalid spec.successPolicy"}},
		{name: "success policy bad rules", mutate: func(j *Job) {
			indexed(j)
			j.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{{}, {SucceededIndexes: ptrTo("3-1")}, {SucceededIndexes: ptrTo("0-1"), SucceededCount: ptrTo[int32](3)}, {SucceededCount: ptrTo[int32](9)}}}
		}, want: []string{"FieldValueRequired spec.successPolicy.rules[0]", "FieldValueInvalid spec.successPolicy.rules[1].succeededIndexes",
			"FieldValueInvalid spec.successPolicy.rules[2].succeededCount", "FieldValueInvalid spec.successPolicy.rules[3].succeededCount"}},
		{name: "pod failure policy with OnFailure", mutate: func(j *Job) {
			j.Spec.Template.Spec.RestartPolicy = RestartPolicyOnFailure
			j.Spec.PodFailurePolicy = &PodFailurePolicy{Rules: []PodFailurePolicyRule{{Action: "Ignore", OnExitCodes: &PodFailurePolicyOnExitCodesRequirement{Operator: "In", Values: []int32{1}}}}}
			j.Spec.PodReplacementPolicy = ptrTo(FailedPodReplacement)
		}, want: []string{"FieldValueInvalid spec.template.spec.restartPolicy"}},
		{name: "pod failure policy bad rules", mutate: func(j *Job) {
			j.Spec.PodFailurePolicy = &PodFailurePolicy{Rules: []PodFailurePolicyRule{
				{Action: "", OnExitCodes: &PodFailurePolicyOnExitCodesRequirement{Operator: "Is", Values: []int32{3, 1, 1}, ContainerName: ptrTo("db")}},
				{Action: "Retry"},
				{Action: "FailIndex", OnExitCodes: &PodFailurePolicyOnExitCodesRequirement{Operator: "In", Values: []int32{0}},
					OnPodConditions: []PodFailurePolicyOnPodConditionsPattern{{Type: "bad type!", Status: "Maybe"}}},
			}}
			j.Spec.PodReplacementPolicy = ptrTo(TerminatingOrFailedPodReplacement)
		}, want: []string{
			"FieldValueRequired spec.podFailurePolicy.rules[0].action", "FieldValueNotSupported spec.podFailurePolicy.rules[0].onExitCodes.operator",
			"FieldValueInvalid spec.podFailurePolicy.rules[0].onExitCodes.containerName", "FieldValueDuplicate spec.podFailurePolicy.rules[0].onExitCodes.values[2]",
			"FieldValueInvalid spec.podFailurePolicy.rules[0].onExitCodes.values",
			"FieldValueNotSupported spec.podFailurePolicy.rules[1].action", "FieldValueInvalid spec.podFailurePolicy.rules[1]",
			"FieldValueInvalid spec.podFailurePolicy.rules[2].action", "FieldValueInvalid spec.podFailurePolicy.rules[2].onExitCodes.values[0]",
			"FieldValueInvalid spec.podFailurePolicy.rules[2].onPodConditions[0].type", "FieldValueNotSupported spec.podFailurePolicy.rules[2].onPodConditions[0].status",
			"FieldValueInvalid spec.podFailurePolicy.rules[2]",
			"FieldValueNotSupported spec.podReplacementPolicy",
		}},
		{name: "bad pod replacement policy", mutate: func(j *Job) { j.Spec.PodReplacementPolicy = ptrTo("Never") },
			want: []string{"FieldValueNotSupported spec.podReplacementPolicy"}},
		{name: "user selector without manualSelector", mutate: func(j *Job) {
			j.Spec.Selector.MatchLabels["app"] = "pi"
			j.Spec.Template.Labels["app"] = "pi"
		}, want: []string{"FieldValueInvalid spec.selector"}},
		{name: "generated label changed", mutate: func(j *Job) { j.Spec.Template.Labels[JobNameLabel] = "other" },
			want: []string{"FieldValueInvalid spec.template.metadata.labels[batch.kubernetes.io/job-name]"}},
		{name: "missing selector with manualSelector", mutate: func(j *Job) { j.Spec.ManualSelector = ptrTo(true); j.Spec.Selector = nil },
			want: []string{"FieldValueRequired spec.selector"}},
		{name: "manual selector not matching", mutate: func(j *Job) {
			j.Spec.ManualSelector = ptrTo(true)
			j.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"app": "other"}}
		}, want: []string{"FieldValueInvalid spec.template.metadata.labels"}},
		{name: "bad managedBy", mutate: func(j *Job) { j.Spec.ManagedBy = ptrTo("nope") },
			want: []string{"FieldValueInvalid spec.managedBy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := validJob()
			tt.mutate(j)
			checkErrs(t, ValidateJob(j), tt.want...)
		})
	}
}

func TestValidateJobUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*Job)
		mutate func(*Job)
		want   []string
	}{
		{name: "parallelism, suspend, deadline, backoff and ttl may change", mutate: func(j *Job) {
			j.Spec.Parallelism, j.Spec.Suspend = ptrTo[int32](3), ptrTo(true)
			j.Spec.ActiveDeadlineSeconds, j.Spec.BackoffLimit, j.Spec.TTLSecondsAfterFinished = ptrTo[int64](60), ptrTo[int32](2), ptrTo[int32](100)
		}},
		{name: "template is immutable", mutate: func(j *Job) { j.Spec.Template.Spec.Containers[0].Image = "perl:5" },
			want: []string{"FieldValueInvalid spec.template"}},
		{name: "completions are immutable", mutate: func(j *Job) { j.Spec.Completions = ptrTo[int32](3) },
			want: []string{"FieldValueInvalid spec.completions"}},
		{name: "selector is immutable", mutate: func(j *Job) {
			j.Spec.Selector.MatchLabels[JobControllerUIDLabel] = "other"
		}, want: []string{"FieldValueInvalid spec.selector", "FieldValueInvalid spec.template.metadata.labels"}},
		{name: "completionMode is immutable", mutate: func(j *Job) { j.Spec.CompletionMode = ptrTo(IndexedCompletion) },
			want: []string{"FieldValueInvalid spec.completionMode"}},
		{name: "elastic indexed: completions with parallelism",
			old: func(j *Job) {
				j.Spec.CompletionMode, j.Spec.Completions, j.Spec.Parallelism = ptrTo(IndexedCompletion), ptrTo[int32](4), ptrTo[int32](4)
			},
			mutate: func(j *Job) {
				j.Spec.CompletionMode, j.Spec.Completions, j.Spec.Parallelism = ptrTo(IndexedCompletion), ptrTo[int32](6), ptrTo[int32](6)
			}},
		{name: "elastic indexed: completions alone",
			old: func(j *Job) {
				j.Spec.CompletionMode, j.Spec.Completions, j.Spec.Parallelism = ptrTo(IndexedCompletion), ptrTo[int32](4), ptrTo[int32](4)
			},
			mutate: func(j *Job) {
				j.Spec.CompletionMode, j.Spec.Completions, j.Spec.Parallelism = ptrTo(IndexedCompletion), ptrTo[int32](6), ptrTo[int32](4)
			}, want: []string{"FieldValueInvalid spec.completions"}},
		{name: "suspended and never started: scheduling directives may change",
			old: func(j *Job) { j.Spec.Suspend = ptrTo(true) },
			mutate: func(j *Job) {
				j.Spec.Suspend = ptrTo(false)
				j.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"}
				j.Spec.Template.Annotations = map[string]string{"a": "b"}
			}},
		{name: "suspended: the image still may not change",
			old:    func(j *Job) { j.Spec.Suspend = ptrTo(true) },
			mutate: func(j *Job) { j.Spec.Template.Spec.Containers[0].Image = "perl:5" },
			want:   []string{"FieldValueInvalid spec.template"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, j := validJob(), validJob()
			if tt.old != nil {
				tt.old(old)
				tt.old(j)
			}
			tt.mutate(j)
			checkErrs(t, ValidateJobUpdate(j, old), tt.want...)
		})
	}
}

func TestValidateJobStatusUpdate(t *testing.T) {
	old := validJob()
	j := validJob()
	j.Spec.CompletionMode, j.Spec.Completions = ptrTo(IndexedCompletion), ptrTo[int32](5)
	j.Status = JobStatus{Active: 1, Succeeded: 3, CompletedIndexes: "0,2-3", Ready: ptrTo[int32](1)}
	checkErrs(t, ValidateJobStatusUpdate(j, old))
	j.Status = JobStatus{Active: -1, CompletedIndexes: "3,1", FailedIndexes: ptrTo("9")}
	checkErrs(t, ValidateJobStatusUpdate(j, old),
		"FieldValueInvalid status.active", "FieldValueInvalid status.completedIndexes", "FieldValueInvalid status.failedIndexes")
}

func TestValidateCronJob(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*CronJob)
		want   []string
	}{
		{name: "valid", mutate: func(*CronJob) {}},
		{name: "valid macro", mutate: func(c *CronJob) { c.Spec.Schedule = "@hourly" }},
		{name: "valid every", mutate: func(c *CronJob) { c.Spec.Schedule = "@every 1h30m" }},
		{name: "valid ranges and steps", mutate: func(c *CronJob) { c.Spec.Schedule = "*/15 9-17 * JAN-JUN MON-FRI" }},
		{name: "valid time zone", mutate: func(c *CronJob) { c.Spec.TimeZone = ptrTo("Europe/Berlin") }},
		{name: "valid Forbid", mutate: func(c *CronJob) { c.Spec.ConcurrencyPolicy = ForbidConcurrent }},

		{name: "missing schedule", mutate: func(c *CronJob) { c.Spec.Schedule = "" },
			want: []string{"FieldValueRequired spec.schedule"}},
		{name: "bad schedule", mutate: func(c *CronJob) { c.Spec.Schedule = "61 * * * *" },
			want: []string{"FieldValueInvalid spec.schedule"}},
		{name: "six fields", mutate: func(c *CronJob) { c.Spec.Schedule = "0 0 3 * * *" },
			want: []string{"FieldValueInvalid spec.schedule"}},
		{name: "unknown macro", mutate: func(c *CronJob) { c.Spec.Schedule = "@fortnightly" },
			want: []string{"FieldValueInvalid spec.schedule"}},
		{name: "TZ in schedule", mutate: func(c *CronJob) { c.Spec.Schedule = "CRON_TZ=UTC 0 3 * * *" },
			want: []string{"FieldValueInvalid spec.schedule"}},
		{name: "unknown time zone", mutate: func(c *CronJob) { c.Spec.TimeZone = ptrTo("Mars/Olympus") },
			want: []string{"FieldValueInvalid spec.timeZone"}},
		{name: "bad time zone characters", mutate: func(c *CronJob) { c.Spec.TimeZone = ptrTo("../etc/passwd") },
			want: []string{"FieldValueInvalid spec.timeZone"}},
		{name: "Local time zone", mutate: func(c *CronJob) { c.Spec.TimeZone = ptrTo("Local") },
			want: []string{"FieldValueInvalid spec.timeZone"}},
		{name: "empty time zone", mutate: func(c *CronJob) { c.Spec.TimeZone = ptrTo("") },
			want: []string{"FieldValueInvalid spec.timeZone"}},
		{name: "bad concurrency policy", mutate: func(c *CronJob) { c.Spec.ConcurrencyPolicy = "Sometimes" },
			want: []string{"FieldValueNotSupported spec.concurrencyPolicy"}},
		{name: "negative deadline and limits", mutate: func(c *CronJob) {
			c.Spec.StartingDeadlineSeconds = ptrTo[int64](-1)
			c.Spec.SuccessfulJobsHistoryLimit, c.Spec.FailedJobsHistoryLimit = ptrTo[int32](-1), ptrTo[int32](-1)
		}, want: []string{"FieldValueInvalid spec.startingDeadlineSeconds", "FieldValueInvalid spec.successfulJobsHistoryLimit", "FieldValueInvalid spec.failedJobsHistoryLimit"}},
		{name: "template with selector", mutate: func(c *CronJob) {
			c.Spec.JobTemplate.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"a": "b"}}
			c.Spec.JobTemplate.Spec.ManualSelector = ptrTo(true)
		}, want: []string{"FieldValueInvalid spec.jobTemplate.spec.selector", "FieldValueNotSupported spec.jobTemplate.spec.manualSelector"}},
		{name: "template restartPolicy Always", mutate: func(c *CronJob) { c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = RestartPolicyAlways },
			want: []string{"FieldValueRequired spec.jobTemplate.spec.template.spec.restartPolicy"}},
		{name: "name too long", mutate: func(c *CronJob) { c.Name = strings.Repeat("a", 53) },
			want: []string{"FieldValueInvalid metadata.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validCronJob()
			tt.mutate(c)
			checkErrs(t, ValidateCronJob(c), tt.want...)
		})
	}
}

func TestValidateCronJobUpdate(t *testing.T) {
	old := validCronJob()
	old.Name = strings.Repeat("a", 60)
	c := validCronJob()
	c.Name = old.Name
	c.Spec.Schedule = "*/5 * * * *"
	c.Spec.Suspend = ptrTo(true)
	checkErrs(t, ValidateCronJobUpdate(c, old))

	// A TZ already in the schedule is tolerated, but not with timeZone.
	old.Spec.Schedule = "TZ=UTC 0 3 * * *"
	c.Spec.Schedule = "TZ=UTC 0 4 * * *"
	checkErrs(t, ValidateCronJobUpdate(c, old))
	c.Spec.TimeZone = ptrTo("UTC")
	checkErrs(t, ValidateCronJobUpdate(c, old), "FieldValueInvalid spec.schedule")
}

func TestIndexes(t *testing.T) {
	for _, tt := range []struct {
		in   []int32
		want string
	}{
		{nil, ""}, {[]int32{0}, "0"}, {[]int32{1, 0}, "0,1"}, {[]int32{1, 3, 4, 5, 7}, "1,3-5,7"}, {[]int32{2, 2, 3, 4}, "2-4"},
	} {
		if got := FormatIndexes(tt.in); got != tt.want {
			t.Errorf("FormatIndexes(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	got, err := ParseIndexes("1,3-5,7", 8)
	if err != nil || !semanticEqual(got, []int32{1, 3, 4, 5, 7}) {
		t.Fatalf("ParseIndexes = %v, %v", got, err)
	}
	for _, bad := range []string{"8", "3,1", "1-1", "a", "1,,2", "-1", "2-4,4"} {
		if _, err := ParseIndexes(bad, 8); err == nil {
			t.Errorf("ParseIndexes(%q) accepted", bad)
		}
	}
}
