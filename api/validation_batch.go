package api

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	// A CronJob's timeZone is checked with time.LoadLocation; the embedded
	// database makes that answer the same on hosts without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"

	"github.com/skiff-dev/skiff/api/field"
)

// Limits of Kubernetes' Job validation.
const (
	maxParallelismForIndexedJob             = 100000
	maxFailedIndexesForIndexedJob           = 100_000
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000
	maxPodFailurePolicyRules                = 20
	maxPodFailurePolicyOnExitCodesValues    = 255
	maxPodFailurePolicyOnPodConditions      = 20
	maxSuccessPolicyRules                   = 20
	maxSucceededIndexesLength               = 64 * 1024
	maxManagedByLength                      = 63
	// cronJobMaxNameLength leaves room for the 11-character "-<minutes>"
	// suffix of the Jobs a CronJob creates (a Job name is a 63-byte label).
	cronJobMaxNameLength = 52
)

var (
	podFailurePolicyActions  = []string{PodFailurePolicyActionCount, PodFailurePolicyActionFailIndex, PodFailurePolicyActionFailJob, PodFailurePolicyActionIgnore}
	podFailurePolicyOps      = []string{PodFailurePolicyOnExitCodesOpIn, PodFailurePolicyOnExitCodesOpNotIn}
	podFailurePolicyStatuses = []string{string(ConditionFalse), string(ConditionTrue), string(ConditionUnknown)}
	// validTimeZoneCharacters is one component of an IANA zone name
	// (0-9 and + are tolerated for legacy names), as Kubernetes checks it.
	validTimeZoneCharacters = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)
)

// ValidateJob checks a new Job: metadata (a DNS subdomain name), the
// generated selector and labels (unless manualSelector), the spec, and for
// an Indexed Job that its last pod's hostname <name>-<completions-1> is a
// DNS label.
func ValidateJob(j *Job) field.ErrorList {
	errs := ValidateObjectMeta(&j.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateGeneratedSelector(j)...)
	errs = append(errs, validateJobSpecWithSelector(&j.Spec, field.NewPath("spec"))...)
	if isIndexed(&j.Spec) && j.Spec.Completions != nil && *j.Spec.Completions > 0 {
		host := fmt.Sprintf("%s-%d", j.Name, *j.Spec.Completions-1)
		if len(ValidateDNS1123Label(host)) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), j.Name,
				"will not able to create pod with invalid DNS label: "+host))
		}
	}
	return errs
}

func isIndexed(s *JobSpec) bool {
	return s.CompletionMode != nil && *s.CompletionMode == IndexedCompletion
}

// validateGeneratedSelector checks that a Job without manualSelector has
// the labels its selector generation gave it and a selector matching them.
func validateGeneratedSelector(j *Job) field.ErrorList {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector || j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	tm := field.NewPath("spec", "template", "metadata")
	for _, l := range []struct{ key, want string }{
		{LegacyJobControllerUIDLabel, j.UID}, {LegacyJobNameLabel, j.Name},
		{JobControllerUIDLabel, j.UID}, {JobNameLabel, j.Name},
	} {
		errs = append(errs, validateHasLabel(j.Spec.Template.Labels, tm, l.key, l.want)...)
	}
	want := map[string]string{
		JobControllerUIDLabel: j.UID, JobNameLabel: j.Name,
		LegacyJobControllerUIDLabel: j.UID, LegacyJobNameLabel: j.Name,
	}
	if len(ValidateLabelSelector(j.Spec.Selector, field.NewPath("spec", "selector"))) == 0 && !SelectorMatches(j.Spec.Selector, want) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

func validateHasLabel(labels map[string]string, meta *field.Path, key, want string) field.ErrorList {
	got, ok := labels[key]
	if !ok {
		return field.ErrorList{field.Required(meta.Child("labels").Key(key), want)}
	}
	if got != want {
		return field.ErrorList{field.Invalid(meta.Child("labels").Key(key), labels, fmt.Sprintf("must be '%s'", want))}
	}
	return nil
}

// validateJobSpecWithSelector is a Job's spec check: validateJobSpec plus a
// required, valid selector matching the template's labels.
func validateJobSpecWithSelector(s *JobSpec, path *field.Path) field.ErrorList {
	errs := validateJobSpec(s, path)
	if s.Selector == nil {
		errs = append(errs, field.Required(path.Child("selector"), ""))
	} else {
		sel := ValidateLabelSelector(s.Selector, path.Child("selector"))
		errs = append(errs, sel...)
		if len(sel) == 0 && !SelectorMatches(s.Selector, s.Template.Labels) {
			errs = append(errs, field.Invalid(path.Child("template", "metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
		}
	}
	return errs
}

// validateJobSpec checks what a Job and a CronJob's job template share.
func validateJobSpec(s *JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	nonneg := func(v *int32, name string) {
		if v != nil {
			errs = append(errs, ValidateNonnegativeField(int64(*v), path.Child(name))...)
		}
	}
	nonneg(s.Parallelism, "parallelism")
	nonneg(s.Completions, "completions")
	if s.ActiveDeadlineSeconds != nil {
		errs = append(errs, ValidateNonnegativeField(*s.ActiveDeadlineSeconds, path.Child("activeDeadlineSeconds"))...)
	}
	nonneg(s.BackoffLimit, "backoffLimit")
	nonneg(s.TTLSecondsAfterFinished, "ttlSecondsAfterFinished")
	if s.BackoffLimitPerIndex != nil {
		nonneg(s.BackoffLimitPerIndex, "backoffLimitPerIndex")
		if !isIndexed(s) {
			errs = append(errs, field.Forbidden(path.Child("backoffLimitPerIndex"), "requires indexed completion mode"))
		}
	}
	if m := s.MaxFailedIndexes; m != nil {
		nonneg(m, "maxFailedIndexes")
		if s.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(path.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
		if *m > maxFailedIndexesForIndexedJob {
			errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *m, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
		}
		if s.Completions != nil && *s.Completions > completionsSoftLimit && *m > maxFailedIndexesLimitForHighCompletions {
			errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *m,
				fmt.Sprintf("must be less than or equal to %d if completions greater than %d", maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
		}
	}
	if s.ManagedBy != nil {
		mp := path.Child("managedBy")
		if len(*s.ManagedBy) > maxManagedByLength {
			errs = append(errs, field.TooLong(mp, *s.ManagedBy, maxManagedByLength))
		} else {
			errs = append(errs, invalidEach(mp, *s.ManagedBy, validateDomainPrefixedPath(*s.ManagedBy))...)
		}
	}
	if s.CompletionMode != nil {
		switch *s.CompletionMode {
		case NonIndexedCompletion:
		case IndexedCompletion:
			if s.Completions == nil {
				errs = append(errs, field.Required(path.Child("completions"), "when completion mode is "+IndexedCompletion))
			}
			if s.Parallelism != nil && *s.Parallelism > maxParallelismForIndexedJob {
				errs = append(errs, field.Invalid(path.Child("parallelism"), *s.Parallelism,
					fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, IndexedCompletion)))
			}
			if s.Completions != nil && s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > *s.Completions {
				errs = append(errs, field.Invalid(path.Child("maxFailedIndexes"), *s.MaxFailedIndexes, "must be less than or equal to completions"))
			}
			if s.Completions != nil && *s.Completions > completionsSoftLimit && s.BackoffLimitPerIndex != nil &&
				s.Parallelism != nil && *s.Parallelism > parallelismLimitForHighCompletions {
				errs = append(errs, field.Invalid(path.Child("parallelism"), *s.Parallelism,
					fmt.Sprintf("must be less than or equal to %d if completions greater than %d", parallelismLimitForHighCompletions, completionsSoftLimit)))
			}
		default:
			errs = append(errs, field.NotSupported(path.Child("completionMode"), *s.CompletionMode, []string{NonIndexedCompletion, IndexedCompletion}))
		}
	}
	if s.SuccessPolicy != nil {
		if !isIndexed(s) {
			errs = append(errs, field.Invalid(path.Child("successPolicy"), *s.SuccessPolicy, "requires indexed completion mode"))
		} else if s.Completions != nil {
			errs = append(errs, validateSuccessPolicy(s, path.Child("successPolicy"))...)
		}
	}
	if s.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(s, path.Child("podFailurePolicy"))...)
	}
	if p := s.PodReplacementPolicy; p != nil {
		switch {
		case s.PodFailurePolicy != nil && *p != FailedPodReplacement:
			errs = append(errs, field.NotSupported(path.Child("podReplacementPolicy"), *p, []string{FailedPodReplacement}))
		case s.PodFailurePolicy == nil && *p != FailedPodReplacement && *p != TerminatingOrFailedPodReplacement:
			errs = append(errs, field.NotSupported(path.Child("podReplacementPolicy"), *p, []string{FailedPodReplacement, TerminatingOrFailedPodReplacement}))
		}
	}
	tp := path.Child("template")
	errs = append(errs, ValidatePodTemplateSpec(&s.Template, tp)...)
	rp := tp.Child("spec", "restartPolicy")
	// The pod defaults make an unset restartPolicy Always, so Always is
	// reported as missing, as Kubernetes does.
	switch rest := s.Template.Spec.RestartPolicy; {
	case rest == RestartPolicyAlways || rest == "":
		errs = append(errs, field.Required(rp, fmt.Sprintf("valid values: %q, %q", RestartPolicyOnFailure, RestartPolicyNever)))
	case rest != RestartPolicyOnFailure && rest != RestartPolicyNever:
		errs = append(errs, field.NotSupported(rp, rest, []string{RestartPolicyOnFailure, RestartPolicyNever}))
	case s.PodFailurePolicy != nil && rest != RestartPolicyNever:
		errs = append(errs, field.Invalid(rp, rest, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", RestartPolicyNever)))
	case s.BackoffLimitPerIndex != nil && rest != RestartPolicyNever:
		errs = append(errs, field.Invalid(rp, rest, fmt.Sprintf("only %q is supported when backoffLimitPerIndex is specified", RestartPolicyNever)))
	}
	return errs
}

// validateDomainPrefixedPath checks a managedBy value: <domain>/<path>.
func validateDomainPrefixedPath(v string) []string {
	domain, p, ok := strings.Cut(v, "/")
	if !ok || p == "" {
		return []string{"must be a domain-prefixed path (such as \"acme.io/foo\")"}
	}
	return ValidateDNS1123Subdomain(domain)
}

func validatePodFailurePolicy(s *JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := path.Child("rules")
	if n := len(s.PodFailurePolicy.Rules); n > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rules, n, maxPodFailurePolicyRules))
	}
	names := map[string]bool{}
	for _, c := range s.Template.Spec.Containers {
		names[c.Name] = true
	}
	for _, c := range s.Template.Spec.InitContainers {
		names[c.Name] = true
	}
	for i := range s.PodFailurePolicy.Rules {
		r, rpath := &s.PodFailurePolicy.Rules[i], rules.Index(i)
		ap := rpath.Child("action")
		switch {
		case r.Action == "":
			errs = append(errs, field.Required(ap, fmt.Sprintf("valid values: %q", podFailurePolicyActions)))
		case r.Action == PodFailurePolicyActionFailIndex:
			if s.BackoffLimitPerIndex == nil {
				errs = append(errs, field.Invalid(ap, r.Action, "requires the backoffLimitPerIndex to be set"))
			}
		case !contains(podFailurePolicyActions, r.Action):
			errs = append(errs, field.NotSupported(ap, r.Action, podFailurePolicyActions))
		}
		if r.OnExitCodes != nil {
			errs = append(errs, validateOnExitCodes(r.OnExitCodes, rpath.Child("onExitCodes"), names)...)
		}
		if n := len(r.OnPodConditions); n > 0 {
			cp := rpath.Child("onPodConditions")
			if n > maxPodFailurePolicyOnPodConditions {
				errs = append(errs, field.TooMany(cp, n, maxPodFailurePolicyOnPodConditions))
			}
			for j, pat := range r.OnPodConditions {
				pp := cp.Index(j)
				errs = append(errs, ValidateQualifiedNameField(pat.Type, pp.Child("type"))...)
				switch {
				case pat.Status == "":
					errs = append(errs, field.Required(pp.Child("status"), fmt.Sprintf("valid values: %q", podFailurePolicyStatuses)))
				case !contains(podFailurePolicyStatuses, string(pat.Status)):
					errs = append(errs, field.NotSupported(pp.Child("status"), string(pat.Status), podFailurePolicyStatuses))
				}
			}
		}
		switch {
		case r.OnExitCodes != nil && len(r.OnPodConditions) > 0:
			errs = append(errs, field.Invalid(rpath, nil, "specifying both OnExitCodes and OnPodConditions is not supported"))
		case r.OnExitCodes == nil && len(r.OnPodConditions) == 0:
			errs = append(errs, field.Invalid(rpath, nil, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
	}
	return errs
}

func validateOnExitCodes(r *PodFailurePolicyOnExitCodesRequirement, path *field.Path, names map[string]bool) field.ErrorList {
	var errs field.ErrorList
	op := path.Child("operator")
	switch {
	case r.Operator == "":
		errs = append(errs, field.Required(op, fmt.Sprintf("valid values: %q", podFailurePolicyOps)))
	case !contains(podFailurePolicyOps, r.Operator):
		errs = append(errs, field.NotSupported(op, r.Operator, podFailurePolicyOps))
	}
	if r.ContainerName != nil && !names[*r.ContainerName] {
		errs = append(errs, field.Invalid(path.Child("containerName"), *r.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	vp := path.Child("values")
	switch n := len(r.Values); {
	case n == 0:
		errs = append(errs, field.Invalid(vp, r.Values, "at least one value is required"))
	case n > maxPodFailurePolicyOnExitCodesValues:
		errs = append(errs, field.TooMany(vp, n, maxPodFailurePolicyOnExitCodesValues))
	}
	ordered := true
	seen := map[int32]bool{}
	for j, v := range r.Values {
		if r.Operator == PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(vp.Index(j), v, "must not be 0 for the In operator"))
		}
		if seen[v] {
			errs = append(errs, field.Duplicate(vp.Index(j), v))
		}
		seen[v] = true
		if j > 0 && r.Values[j-1] > v {
			ordered = false
		}
	}
	if !ordered {
		errs = append(errs, field.Invalid(vp, r.Values, "must be ordered"))
	}
	return errs
}

func validateSuccessPolicy(s *JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := path.Child("rules")
	n := len(s.SuccessPolicy.Rules)
	if n == 0 {
		errs = append(errs, field.Required(rules, "at least one rules must be specified when the successPolicy is specified"))
	}
	if n > maxSuccessPolicyRules {
		errs = append(errs, field.TooMany(rules, n, maxSuccessPolicyRules))
	}
	completions := *s.Completions
	for i, r := range s.SuccessPolicy.Rules {
		rp := rules.Index(i)
		if r.SucceededIndexes == nil && r.SucceededCount == nil {
			errs = append(errs, field.Required(rp, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int32
		if r.SucceededIndexes != nil {
			ip := rp.Child("succeededIndexes")
			if len(*r.SucceededIndexes) > maxSucceededIndexesLength {
				errs = append(errs, field.TooLong(ip, *r.SucceededIndexes, maxSucceededIndexesLength))
			}
			ix, err := ParseIndexes(*r.SucceededIndexes, completions)
			if err != nil {
				errs = append(errs, field.Invalid(ip, *r.SucceededIndexes, "error parsing succeededIndexes: "+err.Error()))
			}
			total = int32(len(ix))
		}
		if c := r.SucceededCount; c != nil {
			cp := rp.Child("succeededCount")
			if *c < 0 {
				errs = append(errs, field.Invalid(cp, *c, "must be greater than or equal to 0"))
			}
			if *c > completions {
				errs = append(errs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if r.SucceededIndexes != nil && *c > total {
				errs = append(errs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// ValidateJobUpdate checks an update of a Job. The new Job must be valid;
// selector, completionMode, podFailurePolicy, successPolicy,
// backoffLimitPerIndex and managedBy are immutable; completions may change
// only for an Indexed Job and only together with parallelism (to the same
// value); the template is immutable except that a suspended Job that has
// never started may change its pod template's labels, annotations,
// nodeSelector and tolerations.
func ValidateJobUpdate(j, old *Job) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	s, os, path := &j.Spec, &old.Spec, field.NewPath("spec")
	errs = append(errs, validateJobSpecWithSelector(s, path)...)
	if !semanticEqual(s.Completions, os.Completions) {
		switch {
		case !isIndexed(s) || !isIndexed(os):
			errs = append(errs, ValidateImmutableField(s.Completions, os.Completions, path.Child("completions"))...)
		case !semanticEqual(s.Completions, s.Parallelism):
			errs = append(errs, field.Invalid(path.Child("completions"), s.Completions,
				"can only be modified in tandem with spec.parallelism"))
		}
	}
	errs = append(errs, ValidateImmutableField(s.Selector, os.Selector, path.Child("selector"))...)
	oldTemplate := os.Template
	if os.Suspend != nil && *os.Suspend && old.Status.StartTime == nil {
		oldTemplate = DeepCopyPodTemplate(os.Template)
		oldTemplate.Labels, oldTemplate.Annotations = s.Template.Labels, s.Template.Annotations
		oldTemplate.Spec.NodeSelector, oldTemplate.Spec.Tolerations = s.Template.Spec.NodeSelector, s.Template.Spec.Tolerations
	}
	errs = append(errs, ValidateImmutableField(s.Template, oldTemplate, path.Child("template"))...)
	errs = append(errs, ValidateImmutableField(s.CompletionMode, os.CompletionMode, path.Child("completionMode"))...)
	errs = append(errs, ValidateImmutableField(s.PodFailurePolicy, os.PodFailurePolicy, path.Child("podFailurePolicy"))...)
	errs = append(errs, ValidateImmutableField(s.BackoffLimitPerIndex, os.BackoffLimitPerIndex, path.Child("backoffLimitPerIndex"))...)
	errs = append(errs, ValidateImmutableField(s.ManagedBy, os.ManagedBy, path.Child("managedBy"))...)
	errs = append(errs, ValidateImmutableField(s.SuccessPolicy, os.SuccessPolicy, path.Child("successPolicy"))...)
	return errs
}

// DeepCopyPodTemplate copies a pod template through the Pod deep copy.
func DeepCopyPodTemplate(t PodTemplateSpec) PodTemplateSpec {
	p := DeepCopy(&Pod{ObjectMeta: t.ObjectMeta, Spec: t.Spec})
	return PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
}

// ValidateJobStatusUpdate checks a write to jobs/status: the counters are
// non-negative and, for an Indexed Job, completedIndexes and failedIndexes
// parse as index lists below completions.
func ValidateJobStatusUpdate(j, old *Job) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, p := &j.Status, field.NewPath("status")
	for _, c := range []struct {
		name string
		v    int32
	}{{"active", st.Active}, {"succeeded", st.Succeeded}, {"failed", st.Failed}} {
		errs = append(errs, ValidateNonnegativeField(int64(c.v), p.Child(c.name))...)
	}
	if st.Ready != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*st.Ready), p.Child("ready"))...)
	}
	if st.Terminating != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*st.Terminating), p.Child("terminating"))...)
	}
	if isIndexed(&j.Spec) && j.Spec.Completions != nil {
		if _, err := ParseIndexes(st.CompletedIndexes, *j.Spec.Completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("completedIndexes"), st.CompletedIndexes, "error parsing completedIndexes: "+err.Error()))
		}
		if st.FailedIndexes != nil {
			if _, err := ParseIndexes(*st.FailedIndexes, *j.Spec.Completions); err != nil {
				errs = append(errs, field.Invalid(p.Child("failedIndexes"), *st.FailedIndexes, "error parsing failedIndexes: "+err.Error()))
			}
		}
	}
	if st.CompletionTime != nil && st.StartTime != nil && st.CompletionTime.Before(st.StartTime.Time) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), st.CompletionTime, "completionTime cannot be set before startTime"))
	}
	return errs
}

// ValidateCronJob checks a new CronJob: metadata (a DNS subdomain of at
// most 52 characters, so that <name>-<minutes> is a valid Job name) and
// the spec.
func ValidateCronJob(c *CronJob) field.ErrorList {
	errs := ValidateObjectMeta(&c.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateCronJobSpec(&c.Spec, nil, field.NewPath("spec"))...)
	if len(c.Name) > cronJobMaxNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Name, fmt.Sprintf("must be no more than %d characters", cronJobMaxNameLength)))
	}
	return errs
}

// ValidateCronJobUpdate checks an update of a CronJob: the new spec must
// be valid (the 52-character name limit is not applied, so that older
// CronJobs can still be changed); a TZ in the schedule is tolerated only
// when the old schedule had one, and the timeZone is checked only when it
// changed.
func ValidateCronJobUpdate(c, old *CronJob) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateCronJobSpec(&c.Spec, &old.Spec, field.NewPath("spec"))...)
}

// ValidateCronJobStatusUpdate checks a write to cronjobs/status.
func ValidateCronJobStatusUpdate(c, old *CronJob) field.ErrorList {
	return ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
}

func validateCronJobSpec(s, old *CronJobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Schedule == "" {
		errs = append(errs, field.Required(path.Child("schedule"), ""))
	} else {
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		errs = append(errs, validateSchedule(s.Schedule, allowTZ, s.TimeZone, path.Child("schedule"))...)
	}
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, ValidateNonnegativeField(*s.StartingDeadlineSeconds, path.Child("startingDeadlineSeconds"))...)
	}
	if old == nil || !semanticEqual(old.TimeZone, s.TimeZone) {
		errs = append(errs, validateTimeZone(s.TimeZone, path.Child("timeZone"))...)
	}
	cp := path.Child("concurrencyPolicy")
	switch s.ConcurrencyPolicy {
	case AllowConcurrent, ForbidConcurrent, ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(cp, ""))
	default:
		errs = append(errs, field.NotSupported(cp, s.ConcurrencyPolicy, []string{AllowConcurrent, ForbidConcurrent, ReplaceConcurrent}))
	}
	errs = append(errs, validateJobTemplateSpec(&s.JobTemplate, path.Child("jobTemplate"))...)
	if s.SuccessfulJobsHistoryLimit != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.SuccessfulJobsHistoryLimit), path.Child("successfulJobsHistoryLimit"))...)
	}
	if s.FailedJobsHistoryLimit != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.FailedJobsHistoryLimit), path.Child("failedJobsHistoryLimit"))...)
	}
	return errs
}

// ParseSchedule parses a CronJob schedule as Kubernetes does: the standard
// five fields (minute hour day-of-month month day-of-week) or a
// descriptor (@yearly, @monthly, @weekly, @daily, @hourly, @every <d>),
// optionally led by CRON_TZ= or TZ=.
func ParseSchedule(s string) (cron.Schedule, error) { return cron.ParseStandard(s) }

func validateSchedule(s string, allowTZ bool, tz *string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := ParseSchedule(s); err != nil {
		errs = append(errs, field.Invalid(path, s, err.Error()))
	}
	switch {
	case allowTZ && strings.Contains(s, "TZ") && tz != nil:
		errs = append(errs, field.Invalid(path, s, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && strings.Contains(s, "TZ"):
		errs = append(errs, field.Invalid(path, s, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

func validateTimeZone(tz *string, path *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(path, *tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters.MatchString(part) {
			return field.ErrorList{field.Invalid(path, *tz, "unknown time zone "+*tz)}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(path, *tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(path, *tz, err.Error()))
	}
	return errs
}

// validateJobTemplateSpec checks a CronJob's job template: its labels and
// annotations, the Job spec, and that it sets no selector (one is
// generated for each Job) and no manualSelector true.
func validateJobTemplateSpec(t *JobTemplateSpec, path *field.Path) field.ErrorList {
	errs := ValidateLabels(t.Labels, path.Child("metadata", "labels"))
	errs = append(errs, ValidateAnnotations(t.Annotations, path.Child("metadata", "annotations"))...)
	errs = append(errs, validateJobSpec(&t.Spec, path.Child("spec"))...)
	if t.Spec.Selector != nil {
		errs = append(errs, field.Invalid(path.Child("spec", "selector"), t.Spec.Selector, "`selector` will be auto-generated"))
	}
	if t.Spec.ManualSelector != nil && *t.Spec.ManualSelector {
		errs = append(errs, field.NotSupported(path.Child("spec", "manualSelector"), *t.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return errs
}
