package job

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Back-off of pod re-creation after failures, as Kubernetes': 10 s,
// doubling with each failure since the last success, at most 6 min.
const (
	DefaultBackoff = 10 * time.Second
	MaxBackoff     = 6 * time.Minute
)

// Condition messages, as Kubernetes' Job controller writes them.
const (
	msgBackoffLimitExceeded     = "Job has reached the specified backoff limit"
	msgDeadlineExceeded         = "Job was active longer than specified deadline"
	msgMaxFailedIndexesExceeded = "Job has exceeded the specified maximal number of failed indexes"
	msgFailedIndexes            = "Job has failed indexes"
	msgCompletionsReached       = "Reached expected number of succeeded pods"
	msgSuspended                = "Job suspended"
	msgResumed                  = "Job resumed"
)

// noIndex is the completion index of a NonIndexed Job's pods.
const noIndex = -1

// Input is what one reconcile of a Job looks at.
type Input struct {
	Job  *api.Job
	Pods []*api.Pod // the pods the Job controls
	Now  time.Time
}

// Event is an Event the apply step records about the Job.
type Event struct{ Type, Reason, Message string }

// Plan is what Reconcile decided: pods to create (by completion index) and
// delete, finalizers to remove, the Job's status, whether the Job itself
// is to be deleted (ttlSecondsAfterFinished), and when to look again.
type Plan struct {
	// Creates holds one completion index per pod to create (noIndex for a
	// NonIndexed Job), each with its index failure count annotation.
	Creates []Create
	// Deletes are active pods to delete: surplus, a suspended or finished
	// Job's, duplicates of an index.
	Deletes []*api.Pod
	// RemoveFinalizers are pods that carry the job-tracking finalizer and
	// are counted (or need not be): finished, terminating, or of a
	// finished Job.
	RemoveFinalizers []*api.Pod
	// Uncounted is the status.uncountedTerminatedPods to write before the
	// finalizers are removed; nil when it does not change.
	Uncounted *api.UncountedTerminatedPods
	// Status is the status once every finalizer removal succeeded.
	Status api.JobStatus
	// DeleteJob is set when the finished Job's TTL has expired.
	DeleteJob bool
	Events    []Event
	// RequeueAfter, when positive, asks for another look (back-off,
	// deadline, TTL).
	RequeueAfter time.Duration
}

// Create is one pod to create.
type Create struct {
	Index        int
	FailureCount int // for backoffLimitPerIndex (the annotation of the new pod)
}

func (p *Plan) requeue(d time.Duration) {
	if d > 0 && (p.RequeueAfter == 0 || d < p.RequeueAfter) {
		p.RequeueAfter = d
	}
}

func (p *Plan) event(typ, reason, msg string) {
	p.Events = append(p.Events, Event{typ, reason, msg})
}

// podInfo is one pod classified.
type podInfo struct {
	pod         *api.Pod
	index       int // completion index; noIndex when absent or invalid
	succeeded   bool
	failed      bool // counts as failed (Failed, or terminating and not Succeeded)
	active      bool // neither finished nor terminating
	terminating bool
	finalizer   bool
	ignored     bool // failed, but the pod failure policy ignores it
}

func hasFinalizer(p *api.Pod) bool { return slices.Contains(p.Finalizers, api.JobTrackingFinalizer) }

func ptrTo[T any](v T) *T { return &v }

func isIndexed(j *api.Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == api.IndexedCompletion
}

// onlyReplaceFailed is podReplacementPolicy Failed: a terminating pod is
// not replaced until it is gone (or Failed).
func onlyReplaceFailed(j *api.Job) bool {
	return j.Spec.PodReplacementPolicy != nil && *j.Spec.PodReplacementPolicy == api.FailedPodReplacement
}

// completionIndex is a pod's index from its annotation (the label is the
// fallback); noIndex when absent, malformed or not below completions.
func completionIndex(j *api.Job, p *api.Pod) int {
	v, ok := p.Annotations[api.JobCompletionIndexAnnotation]
	if !ok {
		v, ok = p.Labels[api.JobCompletionIndexAnnotation]
	}
	if !ok {
		return noIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || j.Spec.Completions == nil || i >= int(*j.Spec.Completions) {
		return noIndex
	}
	return i
}

func classify(j *api.Job, pods []*api.Pod) []podInfo {
	out := make([]podInfo, 0, len(pods))
	indexed := isIndexed(j)
	for _, p := range pods {
		pi := podInfo{pod: p, index: noIndex, finalizer: hasFinalizer(p)}
		if indexed {
			pi.index = completionIndex(j, p)
		}
		switch p.Status.Phase {
		case api.PodSucceeded:
			pi.succeeded = true
		case api.PodFailed:
			pi.failed = true
			if m := matchPodFailurePolicy(j, p); m != nil && m.action == api.PodFailurePolicyActionIgnore {
				pi.ignored = true
			}
		default:
			if p.DeletionTimestamp != nil {
				pi.terminating = true
				pi.failed = true
			} else {
				pi.active = true
			}
		}
		out = append(out, pi)
	}
	return out
}

func condition(st *api.JobStatus, typ string) *api.JobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

func conditionTrue(st *api.JobStatus, typ string) bool {
	c := condition(st, typ)
	return c != nil && c.Status == api.ConditionTrue
}

// setCondition sets typ to status with reason and message; the transition
// time changes only when the status does. It reports whether anything
// changed.
func setCondition(st *api.JobStatus, typ string, status api.ConditionStatus, reason, msg string, now time.Time) bool {
	if c := condition(st, typ); c != nil {
		if c.Status == status && c.Reason == reason && c.Message == msg {
			return false
		}
		if c.Status != status {
			c.LastTransitionTime = api.NewTime(now)
		}
		c.Status, c.Reason, c.Message, c.LastProbeTime = status, reason, msg, api.NewTime(now)
		return true
	}
	st.Conditions = append(st.Conditions, api.JobCondition{
		Type: typ, Status: status, Reason: reason, Message: msg,
		LastProbeTime: api.NewTime(now), LastTransitionTime: api.NewTime(now),
	})
	return true
}

// IsFinished reports whether the Job has its Complete or Failed condition.
func IsFinished(j *api.Job) bool {
	return conditionTrue(&j.Status, api.JobComplete) || conditionTrue(&j.Status, api.JobFailed)
}

// finishTime is when a finished Job finished: completionTime, else the
// Failed condition's transition time.
func finishTime(j *api.Job) (time.Time, bool) {
	if j.Status.CompletionTime != nil {
		return j.Status.CompletionTime.Time, true
	}
	for _, typ := range []string{api.JobFailed, api.JobComplete} {
		if c := condition(&j.Status, typ); c != nil && c.Status == api.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// podFinishTime is when a finished pod finished: its containers' latest
// finishedAt, else its deletion time, else its creation time.
func podFinishTime(p *api.Pod) time.Time {
	var t time.Time
	for _, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	if t.IsZero() && p.DeletionTimestamp != nil {
		t = p.DeletionTimestamp.Time
	}
	if t.IsZero() {
		t = p.CreationTimestamp.Time
	}
	return t
}

// failureMatch is the pod failure policy rule a failed pod matched.
type failureMatch struct {
	action string
	msg    string
}

// matchPodFailurePolicy finds the first rule a Failed pod matches, as
// Kubernetes does: onExitCodes looks at terminated containers (then init
// containers) with a non-zero exit code, onPodConditions at the pod's
// conditions. Terminating pods that are not Failed match nothing.
func matchPodFailurePolicy(j *api.Job, p *api.Pod) *failureMatch {
	if j.Spec.PodFailurePolicy == nil || p.Status.Phase != api.PodFailed {
		return nil
	}
	for i, r := range j.Spec.PodFailurePolicy.Rules {
		if oe := r.OnExitCodes; oe != nil {
			for _, cs := range slices.Concat(p.Status.ContainerStatuses, p.Status.InitContainerStatuses) {
				if oe.ContainerName != nil && *oe.ContainerName != cs.Name {
					continue
				}
				term := cs.State.Terminated
				if term == nil || term.ExitCode == 0 {
					continue
				}
				in := slices.Contains(oe.Values, term.ExitCode)
				if (oe.Operator == api.PodFailurePolicyOnExitCodesOpIn) == in {
					return &failureMatch{r.Action, fmt.Sprintf("Container %s for pod %s/%s failed with exit code %d matching %s rule at index %d",
						cs.Name, p.Namespace, p.Name, term.ExitCode, r.Action, i)}
				}
			}
		}
		for _, pat := range r.OnPodConditions {
			for _, c := range p.Status.Conditions {
				if c.Type == pat.Type && c.Status == pat.Status {
					return &failureMatch{r.Action, fmt.Sprintf("Pod %s/%s has condition %s matching %s rule at index %d",
						p.Namespace, p.Name, c.Type, r.Action, i)}
				}
			}
		}
	}
	return nil
}

// indexFailureCount is a pod's batch.kubernetes.io/job-index-failure-count.
func indexFailureCount(p *api.Pod) int {
	n, err := strconv.Atoi(p.Annotations[api.JobIndexFailureCountAnnotation])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// restartsOnFailure sums the container restarts of a Job's running and
// pending pods: with restartPolicy OnFailure the node restarts failed
// containers in place, and Kubernetes counts those restarts against
// backoffLimit.
func restartsOnFailure(pods []podInfo) int32 {
	var n int32
	for _, pi := range pods {
		if ph := pi.pod.Status.Phase; ph != api.PodRunning && ph != api.PodPending {
			continue
		}
		for _, cs := range slices.Concat(pi.pod.Status.InitContainerStatuses, pi.pod.Status.ContainerStatuses) {
			n += cs.RestartCount
		}
	}
	return n
}

func podReady(p *api.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// Reconcile decides, for one Job and its pods, what to create, delete and
// unfinalize and the Job's new status. It is pure: everything it looks at
// is in in, and it changes nothing of it.
func Reconcile(in Input) Plan {
	j, now := in.Job, in.Now
	var plan Plan
	st := api.DeepCopy(j).Status
	pods := classify(j, in.Pods)
	indexed := isIndexed(j)

	// ---- Accounting: finished pods with the finalizer are counted once,
	// through status.uncountedTerminatedPods. ----
	old := st.UncountedTerminatedPods
	if old == nil {
		old = &api.UncountedTerminatedPods{}
	}
	unc := api.UncountedTerminatedPods{
		Succeeded: slices.Clone(old.Succeeded), Failed: slices.Clone(old.Failed),
	}
	inUnc := map[string]bool{}
	for _, u := range slices.Concat(old.Succeeded, old.Failed) {
		inUnc[u] = true
	}
	finished := IsFinished(j)
	var failureTarget *failureMatch // FailJob by the pod failure policy
	failedIndexes := map[int]bool{}
	if st.FailedIndexes != nil {
		ix, _ := api.ParseIndexes(*st.FailedIndexes, ptrDeref(j.Spec.Completions))
		for _, i := range ix {
			failedIndexes[int(i)] = true
		}
	}
	for _, pi := range pods {
		p := pi.pod
		if !pi.finalizer {
			continue
		}
		switch {
		case pi.succeeded:
			if !inUnc[p.UID] && (!indexed || pi.index != noIndex) {
				unc.Succeeded = append(unc.Succeeded, p.UID)
				inUnc[p.UID] = true
			}
		case pi.failed:
			if !inUnc[p.UID] {
				m := matchPodFailurePolicy(j, p)
				switch {
				case m != nil && m.action == api.PodFailurePolicyActionIgnore:
					// Not counted, not against the back-off limit.
				default:
					if m != nil && m.action == api.PodFailurePolicyActionFailJob && failureTarget == nil {
						failureTarget = m
					}
					if indexed && j.Spec.BackoffLimitPerIndex != nil && pi.index != noIndex &&
						(m != nil && m.action == api.PodFailurePolicyActionFailIndex ||
							indexFailureCount(p)+1 > int(*j.Spec.BackoffLimitPerIndex)) {
						failedIndexes[pi.index] = true
					}
					unc.Failed = append(unc.Failed, p.UID)
					inUnc[p.UID] = true
				}
			}
		}
		if !pi.active || finished || j.DeletionTimestamp != nil {
			plan.RemoveFinalizers = append(plan.RemoveFinalizers, p)
		}
	}
	if len(unc.Succeeded) != len(old.Succeeded) || len(unc.Failed) != len(old.Failed) {
		plan.Uncounted = &unc
	}
	st.UncountedTerminatedPods = &api.UncountedTerminatedPods{}
	st.Failed += int32(len(unc.Failed))
	done := map[int]bool{} // completed indexes
	if indexed {
		ix, _ := api.ParseIndexes(st.CompletedIndexes, ptrDeref(j.Spec.Completions))
		for _, i := range ix {
			done[int(i)] = true
		}
		for _, pi := range pods {
			if pi.succeeded && pi.index != noIndex && (inUnc[pi.pod.UID] || pi.finalizer) {
				done[pi.index] = true
			}
		}
		st.CompletedIndexes = formatSet(done)
		st.Succeeded = int32(len(done))
	} else {
		st.Succeeded += int32(len(unc.Succeeded))
	}
	if j.Spec.BackoffLimitPerIndex != nil {
		st.FailedIndexes = ptrTo(formatSet(failedIndexes))
	}

	var active, ready, terminating int32
	for _, pi := range pods {
		switch {
		case pi.active:
			active++
			if podReady(pi.pod) {
				ready++
			}
		case pi.terminating:
			terminating++
		}
	}
	st.Active, st.Ready, st.Terminating = active, ptrTo(ready), ptrTo(terminating)

	// ---- A Job being deleted: its pods go with it (garbage collection). ----
	if j.DeletionTimestamp != nil {
		plan.Status = st
		return plan
	}

	// ---- A finished Job: only finalizers and the TTL are left. ----
	if finished {
		for _, pi := range pods {
			if pi.active {
				plan.Deletes = append(plan.Deletes, pi.pod)
			}
		}
		if ttl := j.Spec.TTLSecondsAfterFinished; ttl != nil {
			if at, ok := finishTime(j); ok {
				expire := at.Add(time.Duration(*ttl) * time.Second)
				if !now.Before(expire) {
					plan.DeleteJob = true
				} else {
					plan.requeue(expire.Sub(now))
				}
			}
		}
		plan.Status = st
		return plan
	}

	// ---- Suspension. ----
	suspended := j.Spec.Suspend != nil && *j.Spec.Suspend
	if suspended {
		for _, pi := range pods {
			if pi.active {
				plan.Deletes = append(plan.Deletes, pi.pod)
			}
		}
		if !conditionTrue(&st, api.JobSuspended) {
			setCondition(&st, api.JobSuspended, api.ConditionTrue, api.JobReasonSuspended, msgSuspended, now)
			plan.event(api.EventTypeNormal, "Suspended", msgSuspended)
		}
		// The deadline timer stops: startTime is reset.
		st.StartTime = nil
		plan.Status = st
		return plan
	}
	if c := condition(&st, api.JobSuspended); c != nil && c.Status == api.ConditionTrue {
		setCondition(&st, api.JobSuspended, api.ConditionFalse, api.JobReasonResumed, msgResumed, now)
		plan.event(api.EventTypeNormal, "Resumed", msgResumed)
		st.StartTime = nil
	}
	if st.StartTime == nil {
		st.StartTime = ptrTo(api.NewTime(now))
	}

	// ---- Failure and success criteria. ----
	failReason, failMsg := "", ""
	successReason, successMsg := "", ""
	if c := condition(&st, api.JobFailureTarget); c != nil && c.Status == api.ConditionTrue {
		failReason, failMsg = c.Reason, c.Message
	}
	if c := condition(&st, api.JobSuccessCriteriaMet); c != nil && c.Status == api.ConditionTrue {
		successReason, successMsg = c.Reason, c.Message
	}
	completions := ptrDeref(j.Spec.Completions)
	if failReason == "" && successReason == "" {
		backoffLimit := ptrDeref(j.Spec.BackoffLimit)
		onFailure := j.Spec.Template.Spec.RestartPolicy == api.RestartPolicyOnFailure
		restarts := restartsOnFailure(pods)
		switch {
		case failureTarget != nil:
			failReason, failMsg = api.JobReasonPodFailurePolicy, failureTarget.msg
		case j.Spec.BackoffLimitPerIndex == nil && st.Failed > backoffLimit,
			j.Spec.BackoffLimitPerIndex == nil && onFailure && (backoffLimit == 0 && restarts > 0 || backoffLimit > 0 && restarts >= backoffLimit):
			failReason, failMsg = api.JobReasonBackoffLimitExceeded, msgBackoffLimitExceeded
		case j.Spec.MaxFailedIndexes != nil && int32(len(failedIndexes)) > *j.Spec.MaxFailedIndexes:
			failReason, failMsg = api.JobReasonMaxFailedIndexesExceeded, msgMaxFailedIndexesExceeded
		case j.Spec.ActiveDeadlineSeconds != nil:
			deadline := st.StartTime.Add(time.Duration(*j.Spec.ActiveDeadlineSeconds) * time.Second)
			if !now.Before(deadline) {
				failReason, failMsg = api.JobReasonDeadlineExceeded, msgDeadlineExceeded
			} else {
				plan.requeue(deadline.Sub(now))
			}
		}
		if failReason == "" {
			switch {
			case indexed && j.Spec.SuccessPolicy != nil:
				if i, ok := successPolicyMet(j, st.CompletedIndexes); ok {
					successReason, successMsg = api.JobReasonSuccessPolicy, fmt.Sprintf("Matched rules at index %d", i)
				}
			}
			if successReason == "" {
				switch {
				case indexed:
					if st.Succeeded+int32(len(failedIndexes)) >= completions {
						if len(failedIndexes) > 0 {
							failReason, failMsg = api.JobReasonFailedIndexes, msgFailedIndexes
						} else {
							successReason, successMsg = api.JobReasonCompletionsReached, msgCompletionsReached
						}
					}
				case j.Spec.Completions == nil:
					// A work queue: done once a pod succeeded and none runs.
					if st.Succeeded > 0 && active == 0 {
						successReason, successMsg = api.JobReasonCompletionsReached, msgCompletionsReached
					}
				default:
					if st.Succeeded >= completions {
						successReason, successMsg = api.JobReasonCompletionsReached, msgCompletionsReached
					}
				}
			}
		}
		if failReason != "" {
			setCondition(&st, api.JobFailureTarget, api.ConditionTrue, failReason, failMsg, now)
		} else if successReason != "" {
			setCondition(&st, api.JobSuccessCriteriaMet, api.ConditionTrue, successReason, successMsg, now)
		}
	}
	if failReason != "" || successReason != "" {
		// Finishing: every active pod goes; the final condition waits
		// until none is left running, terminating or uncounted.
		for _, pi := range pods {
			if pi.active {
				plan.Deletes = append(plan.Deletes, pi.pod)
			}
		}
		if active == 0 && terminating == 0 && !anyFinalizer(pods) {
			if failReason != "" {
				setCondition(&st, api.JobFailed, api.ConditionTrue, failReason, failMsg, now)
				plan.event(api.EventTypeWarning, failReason, failMsg)
			} else {
				setCondition(&st, api.JobComplete, api.ConditionTrue, successReason, successMsg, now)
				st.CompletionTime = ptrTo(api.NewTime(now))
				plan.event(api.EventTypeNormal, "Completed", "Job completed")
			}
		}
		plan.Status = st
		return plan
	}

	// ---- Running: how many pods, which indexes. ----
	parallelism := ptrDeref(j.Spec.Parallelism)
	var want int32
	switch {
	case indexed:
		want = min(parallelism, completions-st.Succeeded-int32(len(failedIndexes)))
	case j.Spec.Completions == nil:
		want = parallelism
		if st.Succeeded > 0 {
			want = min(want, active) // no new pods once one succeeded
		}
	default:
		want = min(parallelism, completions-st.Succeeded)
	}
	want = max(want, 0)
	// With podReplacementPolicy Failed, terminating pods still hold
	// their place.
	occupied := active
	if onlyReplaceFailed(j) {
		occupied += terminating
	}

	// Indexed: pods of a completed, failed or already taken index are
	// surplus.
	var surplus []*api.Pod
	taken := map[int]bool{}
	if indexed {
		for _, pi := range pods {
			if !pi.active {
				if pi.terminating && onlyReplaceFailed(j) && pi.index != noIndex {
					taken[pi.index] = true
				}
				continue
			}
			if pi.index == noIndex || taken[pi.index] || failedIndexes[pi.index] || done[pi.index] {
				surplus = append(surplus, pi.pod)
				occupied--
				continue
			}
			taken[pi.index] = true
		}
	}
	if occupied > want {
		surplus = append(surplus, pickSurplus(pods, surplus, int(occupied-want))...)
	}
	plan.Deletes = append(plan.Deletes, surplus...)

	if occupied < want {
		n := int(want - occupied)
		// Exponential back-off after failures since the last success.
		if wait := backoffWait(pods, now); wait > 0 && !onFailureOnly(j) {
			plan.requeue(wait)
		} else if indexed {
			lastFailures := indexFailures(pods)
			for i := 0; i < int(completions) && n > 0; i++ {
				if taken[i] || failedIndexes[i] || done[i] {
					continue
				}
				plan.Creates = append(plan.Creates, Create{Index: i, FailureCount: lastFailures[i]})
				n--
			}
		} else {
			for range n {
				plan.Creates = append(plan.Creates, Create{Index: noIndex})
			}
		}
	}
	plan.Status = st
	return plan
}

func ptrDeref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func anyFinalizer(pods []podInfo) bool {
	for _, pi := range pods {
		if pi.finalizer {
			return true
		}
	}
	return false
}

// onFailureOnly is restartPolicy OnFailure: failures are container
// restarts, which the node backs off itself.
func onFailureOnly(j *api.Job) bool {
	return j.Spec.Template.Spec.RestartPolicy == api.RestartPolicyOnFailure
}

func formatSet(set map[int]bool) string {
	ix := make([]int32, 0, len(set))
	for i := range set {
		ix = append(ix, int32(i))
	}
	return api.FormatIndexes(ix)
}

// indexFailures is, per index, the failure count the next pod of the index
// gets: one more than the highest count of a failed pod of the index.
func indexFailures(pods []podInfo) map[int]int {
	out := map[int]int{}
	for _, pi := range pods {
		if pi.failed && pi.index != noIndex {
			if n := indexFailureCount(pi.pod) + 1; n > out[pi.index] {
				out[pi.index] = n
			}
		}
	}
	return out
}

// successPolicyMet reports the first success policy rule the completed
// indexes satisfy.
func successPolicyMet(j *api.Job, completed string) (int, bool) {
	done, _ := api.ParseIndexes(completed, ptrDeref(j.Spec.Completions))
	for i, r := range j.Spec.SuccessPolicy.Rules {
		var matched int32
		if r.SucceededIndexes != nil {
			want, err := api.ParseIndexes(*r.SucceededIndexes, ptrDeref(j.Spec.Completions))
			if err != nil {
				continue
			}
			all := true
			for _, w := range want {
				if _, ok := slices.BinarySearch(done, w); ok {
					matched++
				} else {
					all = false
				}
			}
			if r.SucceededCount == nil && !all {
				continue
			}
		} else {
			matched = int32(len(done))
		}
		if r.SucceededCount != nil && matched < *r.SucceededCount {
			continue
		}
		return i, true
	}
	return 0, false
}

// backoffWait is how long pod creation must still wait after the failures
// since the last success: DefaultBackoff * 2^(failures-1), at most
// MaxBackoff, from the last failure.
func backoffWait(pods []podInfo, now time.Time) time.Duration {
	var lastSuccess, lastFailure time.Time
	for _, pi := range pods {
		if pi.succeeded {
			if t := podFinishTime(pi.pod); t.After(lastSuccess) {
				lastSuccess = t
			}
		}
	}
	failures := 0
	for _, pi := range pods {
		if !pi.failed || pi.ignored {
			continue
		}
		t := podFinishTime(pi.pod)
		if t.Before(lastSuccess) {
			continue
		}
		failures++
		if t.After(lastFailure) {
			lastFailure = t
		}
	}
	if failures == 0 {
		return 0
	}
	d := DefaultBackoff
	for i := 1; i < failures && d < MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, MaxBackoff)
	return lastFailure.Add(d).Sub(now)
}

// pickSurplus chooses n active pods to delete, not already in taken, as
// Kubernetes ranks them: unscheduled before scheduled, pending before
// running, not ready before ready, newer before older.
func pickSurplus(pods []podInfo, taken []*api.Pod, n int) []*api.Pod {
	var cands []*api.Pod
	for _, pi := range pods {
		if pi.active && !slices.Contains(taken, pi.pod) {
			cands = append(cands, pi.pod)
		}
	}
	rank := func(p *api.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case p.Status.Phase == api.PodPending:
			return 1
		case !podReady(p):
			return 2
		}
		return 3
	}
	sort.SliceStable(cands, func(a, b int) bool {
		ra, rb := rank(cands[a]), rank(cands[b])
		if ra != rb {
			return ra < rb
		}
		return cands[a].CreationTimestamp.After(cands[b].CreationTimestamp.Time)
	})
	if n > len(cands) {
		n = len(cands)
	}
	return cands[:n]
}
