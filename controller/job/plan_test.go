package job

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func newJob(mutate func(*api.Job)) *api.Job {
	j := &api.Job{
		ObjectMeta: api.ObjectMeta{Name: "pi", Namespace: "default", UID: "job-uid"},
		Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{
			RestartPolicy: api.RestartPolicyNever, Containers: []api.Container{{Name: "pi", Image: "perl"}}}}},
	}
	api.PrepareJobForCreate(j)
	api.DefaultJob(j)
	if mutate != nil {
		mutate(j)
	}
	if j.Status.StartTime == nil {
		j.Status.StartTime = &api.Time{Time: t0}
	}
	return j
}

type podOpt func(*api.Pod)

func pod(name string, phase string, opts ...podOpt) *api.Pod {
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + name,
			CreationTimestamp: api.Time{Time: t0}, Finalizers: []string{api.JobTrackingFinalizer}},
		Spec:   api.PodSpec{NodeName: "n1"},
		Status: api.PodStatus{Phase: phase},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func counted(p *api.Pod) { p.Finalizers = nil }
func index(i int) podOpt {
	return func(p *api.Pod) {
		p.Annotations = map[string]string{api.JobCompletionIndexAnnotation: strconv.Itoa(i)}
	}
}
func exitCode(code int32, finished time.Time) podOpt {
	return func(p *api.Pod) {
		p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "pi", State: api.ContainerState{
			Terminated: &api.ContainerStateTerminated{ExitCode: code, FinishedAt: api.Time{Time: finished}}}}}
	}
}
func terminating(p *api.Pod) { p.DeletionTimestamp = &api.Time{Time: t0} }

// summary is a plan in a comparable form.
type summary struct {
	creates                   string // indexes, "-" for NonIndexed
	deletes, finalizers       string
	uncounted                 string // "s:<uids> f:<uids>" or ""
	active, succeeded, failed int32
	completed                 string
	conditions                string // type=reason of True conditions
	complete, deleteJob       bool
	requeue                   time.Duration
}

func summarize(p Plan) summary {
	s := summary{active: p.Status.Active, succeeded: p.Status.Succeeded, failed: p.Status.Failed,
		completed: p.Status.CompletedIndexes, deleteJob: p.DeleteJob, requeue: p.RequeueAfter,
		complete: p.Status.CompletionTime != nil}
	for _, c := range p.Creates {
		if c.Index == noIndex {
			s.creates += "-"
		} else {
			s.creates += fmt.Sprint(c.Index)
		}
	}
	for _, d := range p.Deletes {
		s.deletes += d.Name + " "
	}
	for _, d := range p.RemoveFinalizers {
		s.finalizers += d.Name + " "
	}
	if u := p.Uncounted; u != nil {
		s.uncounted = fmt.Sprintf("s:%v f:%v", u.Succeeded, u.Failed)
	}
	for _, c := range p.Status.Conditions {
		if c.Status == api.ConditionTrue {
			s.conditions += c.Type + "=" + c.Reason + " "
		}
	}
	return s
}

func TestReconcile(t *testing.T) {
	indexed := func(n int32) func(*api.Job) {
		return func(j *api.Job) {
			j.Spec.CompletionMode, j.Spec.Completions = ptrTo(api.IndexedCompletion), ptrTo(n)
		}
	}
	tests := []struct {
		name string
		job  *api.Job
		pods []*api.Pod
		now  time.Time
		want summary
	}{
		{name: "new job creates one pod", job: newJob(nil),
			want: summary{creates: "-"}},
		{name: "parallelism 3 of 5 completions", job: newJob(func(j *api.Job) {
			j.Spec.Parallelism, j.Spec.Completions = ptrTo[int32](3), ptrTo[int32](5)
			j.Status.Succeeded = 3
		}),
			pods: []*api.Pod{pod("a", api.PodRunning), pod("b", api.PodSucceeded, counted), pod("c", api.PodSucceeded, counted), pod("d", api.PodSucceeded, counted)},
			want: summary{creates: "-", active: 1, succeeded: 3}},
		{name: "running pod: nothing to do", job: newJob(nil), pods: []*api.Pod{pod("a", api.PodRunning)},
			want: summary{active: 1}},
		{name: "succeeded pod is counted through uncounted, then finalizer, success criteria met", job: newJob(nil),
			pods: []*api.Pod{pod("a", api.PodSucceeded)},
			want: summary{finalizers: "a ", uncounted: "s:[uid-a] f:[]", succeeded: 1, conditions: "SuccessCriteriaMet=CompletionsReached "}},
		{name: "counted success: Complete", job: newJob(func(j *api.Job) {
			j.Status.Succeeded = 1
			j.Status.Conditions = []api.JobCondition{{Type: api.JobSuccessCriteriaMet, Status: api.ConditionTrue, Reason: api.JobReasonCompletionsReached}}
		}), pods: []*api.Pod{pod("a", api.PodSucceeded, counted)},
			want: summary{succeeded: 1, complete: true, conditions: "SuccessCriteriaMet=CompletionsReached Complete=CompletionsReached "}},
		{name: "pod in uncounted without finalizer moves to the counters", job: newJob(func(j *api.Job) {
			j.Status.UncountedTerminatedPods = &api.UncountedTerminatedPods{Failed: []string{"uid-a"}}
		}), pods: []*api.Pod{pod("a", api.PodFailed, counted, exitCode(1, t0))}, now: t0.Add(time.Minute),
			want: summary{failed: 1, creates: "-"}},
		{name: "failure backs off 10s", job: newJob(nil),
			pods: []*api.Pod{pod("a", api.PodFailed, exitCode(1, t0))}, now: t0.Add(3 * time.Second),
			want: summary{finalizers: "a ", uncounted: "s:[] f:[uid-a]", failed: 1, requeue: 7 * time.Second}},
		{name: "third failure backs off 40s", job: newJob(func(j *api.Job) { j.Status.Failed = 2 }),
			pods: []*api.Pod{pod("a", api.PodFailed, counted, exitCode(1, t0)), pod("b", api.PodFailed, counted, exitCode(1, t0.Add(10*time.Second))),
				pod("c", api.PodFailed, counted, exitCode(1, t0.Add(30*time.Second)))},
			now:  t0.Add(40 * time.Second),
			want: summary{failed: 2, requeue: 30 * time.Second}},
		{name: "back-off elapsed: replacement", job: newJob(func(j *api.Job) { j.Status.Failed = 1 }),
			pods: []*api.Pod{pod("a", api.PodFailed, counted, exitCode(1, t0))}, now: t0.Add(11 * time.Second),
			want: summary{failed: 1, creates: "-"}},
		{name: "backoffLimit exceeded", job: newJob(func(j *api.Job) { j.Spec.BackoffLimit = ptrTo[int32](1); j.Status.Failed = 1 }),
			pods: []*api.Pod{pod("a", api.PodFailed, counted, exitCode(1, t0)), pod("b", api.PodFailed, exitCode(1, t0.Add(time.Minute)))},
			now:  t0.Add(2 * time.Minute),
			want: summary{finalizers: "b ", uncounted: "s:[] f:[uid-b]", failed: 2, conditions: "FailureTarget=BackoffLimitExceeded "}},
		{name: "failure target, no pods left: Failed", job: newJob(func(j *api.Job) {
			j.Status.Failed = 2
			j.Status.Conditions = []api.JobCondition{{Type: api.JobFailureTarget, Status: api.ConditionTrue, Reason: api.JobReasonBackoffLimitExceeded, Message: msgBackoffLimitExceeded}}
		}), pods: []*api.Pod{pod("a", api.PodFailed, counted)},
			want: summary{failed: 2, conditions: "FailureTarget=BackoffLimitExceeded Failed=BackoffLimitExceeded "}},
		{name: "OnFailure counts container restarts", job: newJob(func(j *api.Job) {
			j.Spec.Template.Spec.RestartPolicy, j.Spec.BackoffLimit = api.RestartPolicyOnFailure, ptrTo[int32](2)
		}), pods: []*api.Pod{pod("a", api.PodRunning, func(p *api.Pod) {
			p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "pi", RestartCount: 2}}
		})},
			want: summary{active: 1, deletes: "a ", conditions: "FailureTarget=BackoffLimitExceeded "}},
		{name: "active deadline exceeded deletes the pods", job: newJob(func(j *api.Job) { j.Spec.ActiveDeadlineSeconds = ptrTo[int64](30) }),
			pods: []*api.Pod{pod("a", api.PodRunning)}, now: t0.Add(31 * time.Second),
			want: summary{active: 1, deletes: "a ", conditions: "FailureTarget=DeadlineExceeded "}},
		{name: "active deadline ahead: requeue", job: newJob(func(j *api.Job) { j.Spec.ActiveDeadlineSeconds = ptrTo[int64](30) }),
			pods: []*api.Pod{pod("a", api.PodRunning)}, now: t0.Add(10 * time.Second),
			want: summary{active: 1, requeue: 20 * time.Second}},
		{name: "suspend deletes active pods", job: newJob(func(j *api.Job) { j.Spec.Suspend = ptrTo(true) }),
			pods: []*api.Pod{pod("a", api.PodRunning)},
			want: summary{active: 1, deletes: "a ", conditions: "Suspended=JobSuspended "}},
		{name: "pod failure policy FailJob", job: newJob(func(j *api.Job) {
			j.Spec.PodFailurePolicy = &api.PodFailurePolicy{Rules: []api.PodFailurePolicyRule{{Action: api.PodFailurePolicyActionFailJob,
				OnExitCodes: &api.PodFailurePolicyOnExitCodesRequirement{Operator: "In", Values: []int32{42}}}}}
		}), pods: []*api.Pod{pod("a", api.PodFailed, exitCode(42, t0)), pod("b", api.PodRunning)},
			want: summary{active: 1, deletes: "b ", finalizers: "a ", uncounted: "s:[] f:[uid-a]", failed: 1, conditions: "FailureTarget=PodFailurePolicy "}},
		{name: "pod failure policy Ignore: not counted, replaced at once", job: newJob(func(j *api.Job) {
			j.Spec.PodFailurePolicy = &api.PodFailurePolicy{Rules: []api.PodFailurePolicyRule{{Action: api.PodFailurePolicyActionIgnore,
				OnPodConditions: []api.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget", Status: api.ConditionTrue}}}}}
		}), pods: []*api.Pod{pod("a", api.PodFailed, func(p *api.Pod) {
			p.Status.Conditions = []api.PodCondition{{Type: "DisruptionTarget", Status: api.ConditionTrue}}
		})},
			want: summary{finalizers: "a ", creates: "-"}},
		{name: "pod failure policy Count: counted", job: newJob(func(j *api.Job) {
			j.Spec.PodFailurePolicy = &api.PodFailurePolicy{Rules: []api.PodFailurePolicyRule{{Action: api.PodFailurePolicyActionCount,
				OnExitCodes: &api.PodFailurePolicyOnExitCodesRequirement{Operator: "NotIn", Values: []int32{42}}}}}
		}), pods: []*api.Pod{pod("a", api.PodFailed, exitCode(1, t0))}, now: t0.Add(time.Second),
			want: summary{finalizers: "a ", uncounted: "s:[] f:[uid-a]", failed: 1, requeue: 9 * time.Second}},
		{name: "indexed: lowest free indexes", job: newJob(func(j *api.Job) { indexed(4)(j); j.Spec.Parallelism = ptrTo[int32](3) }),
			pods: []*api.Pod{pod("a", api.PodRunning, index(0)), pod("b", api.PodSucceeded, index(1))},
			want: summary{active: 1, finalizers: "b ", uncounted: "s:[uid-b] f:[]", succeeded: 1, completed: "1", creates: "23"}},
		{name: "indexed: duplicate index deleted", job: newJob(func(j *api.Job) { indexed(2)(j); j.Spec.Parallelism = ptrTo[int32](2) }),
			pods: []*api.Pod{pod("a", api.PodRunning, index(0)), pod("b", api.PodRunning, index(0)), pod("c", api.PodRunning, index(1))},
			want: summary{active: 3, deletes: "b "}},
		{name: "indexed: all indexes done", job: newJob(func(j *api.Job) { indexed(3)(j); j.Status.CompletedIndexes, j.Status.Succeeded = "0,1", 2 }),
			pods: []*api.Pod{pod("c", api.PodSucceeded, index(2))},
			want: summary{finalizers: "c ", uncounted: "s:[uid-c] f:[]", succeeded: 3, completed: "0-2", conditions: "SuccessCriteriaMet=CompletionsReached "}},
		{name: "indexed: success policy", job: newJob(func(j *api.Job) {
			indexed(5)(j)
			j.Spec.SuccessPolicy = &api.SuccessPolicy{Rules: []api.SuccessPolicyRule{{SucceededIndexes: ptrTo("0")}}}
			j.Status.CompletedIndexes, j.Status.Succeeded = "0", 1
		}), pods: []*api.Pod{pod("a", api.PodSucceeded, index(0), counted), pod("b", api.PodRunning, index(1))},
			want: summary{active: 1, deletes: "b ", succeeded: 1, completed: "0", conditions: "SuccessCriteriaMet=SuccessPolicy "}},
		{name: "work queue: done once one succeeded and none runs", job: newJob(func(j *api.Job) {
			j.Spec.Completions, j.Spec.Parallelism = nil, ptrTo[int32](2)
			j.Status.Succeeded = 2
		}),
			pods: []*api.Pod{pod("a", api.PodSucceeded, counted), pod("b", api.PodSucceeded, counted)},
			want: summary{succeeded: 2, complete: true, conditions: "SuccessCriteriaMet=CompletionsReached Complete=CompletionsReached "}},
		{name: "work queue: no new pods after a success", job: newJob(func(j *api.Job) {
			j.Spec.Completions, j.Spec.Parallelism = nil, ptrTo[int32](3)
			j.Status.Succeeded = 1
		}),
			pods: []*api.Pod{pod("a", api.PodSucceeded, counted), pod("b", api.PodRunning)},
			want: summary{active: 1, succeeded: 1}},
		{name: "scale down deletes the newest", job: newJob(func(j *api.Job) { j.Spec.Completions, j.Spec.Parallelism = ptrTo[int32](5), ptrTo[int32](1) }),
			pods: []*api.Pod{pod("old", api.PodRunning), pod("new", api.PodRunning, func(p *api.Pod) { p.CreationTimestamp = api.Time{Time: t0.Add(time.Second)} })},
			want: summary{active: 2, deletes: "new "}},
		{name: "terminating pod counts as failed", job: newJob(nil),
			pods: []*api.Pod{pod("a", api.PodRunning, terminating)}, now: t0.Add(time.Minute),
			want: summary{finalizers: "a ", uncounted: "s:[] f:[uid-a]", failed: 1, creates: "-"}},
		{name: "podReplacementPolicy Failed: a terminating pod holds its place", job: newJob(func(j *api.Job) { j.Spec.PodReplacementPolicy = ptrTo(api.FailedPodReplacement) }),
			pods: []*api.Pod{pod("a", api.PodRunning, terminating)}, now: t0.Add(time.Minute),
			want: summary{finalizers: "a ", uncounted: "s:[] f:[uid-a]", failed: 1}},
		{name: "finished with ttl: delete after it", job: newJob(func(j *api.Job) {
			j.Spec.TTLSecondsAfterFinished = ptrTo[int32](60)
			j.Status.CompletionTime = &api.Time{Time: t0}
			j.Status.Conditions = []api.JobCondition{{Type: api.JobComplete, Status: api.ConditionTrue}}
		}), now: t0.Add(61 * time.Second),
			want: summary{deleteJob: true, complete: true, conditions: "Complete= "}},
		{name: "finished with ttl ahead: requeue", job: newJob(func(j *api.Job) {
			j.Spec.TTLSecondsAfterFinished = ptrTo[int32](60)
			j.Status.CompletionTime = &api.Time{Time: t0}
			j.Status.Conditions = []api.JobCondition{{Type: api.JobComplete, Status: api.ConditionTrue}}
		}), now: t0.Add(20 * time.Second),
			want: summary{requeue: 40 * time.Second, complete: true, conditions: "Complete= "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.now
			if now.IsZero() {
				now = t0
			}
			got := summarize(Reconcile(Input{Job: tt.job, Pods: tt.pods, Now: now}))
			if got != tt.want {
				t.Errorf("plan\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReconcileResume(t *testing.T) {
	j := newJob(func(j *api.Job) {
		j.Status.StartTime = nil
		j.Status.Conditions = []api.JobCondition{{Type: api.JobSuspended, Status: api.ConditionTrue, Reason: api.JobReasonSuspended}}
	})
	p := Reconcile(Input{Job: j, Now: t0})
	c := condition(&p.Status, api.JobSuspended)
	if c == nil || c.Status != api.ConditionFalse || c.Reason != api.JobReasonResumed || p.Status.StartTime == nil || len(p.Creates) != 1 {
		t.Fatalf("resume: %+v creates %v", p.Status, p.Creates)
	}
	if len(p.Events) != 1 || p.Events[0].Reason != "Resumed" {
		t.Fatalf("events %v", p.Events)
	}
}

func TestNewPodIndexed(t *testing.T) {
	j := newJob(func(j *api.Job) {
		j.Spec.CompletionMode, j.Spec.Completions = ptrTo(api.IndexedCompletion), ptrTo[int32](3)
	})
	p := newPod(j, Create{Index: 2})
	if p.GenerateName != "pi-2-" || p.Spec.Hostname != "pi-2" || p.Annotations[api.JobCompletionIndexAnnotation] != "2" ||
		p.Labels[api.JobCompletionIndexAnnotation] != "2" || p.Labels[api.JobNameLabel] != "pi" {
		t.Fatalf("pod %+v", p.ObjectMeta)
	}
	env := p.Spec.Containers[0].Env
	if len(env) != 1 || env[0].Name != CompletionIndexEnv || env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Fatalf("env %+v", env)
	}
	ref := api.ControllerRef(&p.ObjectMeta)
	if ref == nil || ref.UID != "job-uid" || ref.Kind != "Job" || ref.APIVersion != "batch/v1" || len(p.Finalizers) != 1 {
		t.Fatalf("owner %+v finalizers %v", ref, p.Finalizers)
	}
	if errs := api.ValidatePod(&api.Pod{ObjectMeta: api.ObjectMeta{Name: "pi-2-abcde", Namespace: "default", Labels: p.Labels, Annotations: p.Annotations}, Spec: p.Spec}); len(errs) > 0 {
		t.Fatalf("pod invalid: %v", errs)
	}
}
