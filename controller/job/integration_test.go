package job_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/job"
	"github.com/skiff-dev/skiff/server/servertest"
)

func lookup(group, resource string) *api.ResourceInfo {
	for _, r := range api.Resources() {
		if r.Group == group && r.Resource == resource {
			return r
		}
	}
	panic(resource)
}

var (
	jobsInfo = lookup("batch", "jobs")
	podsInfo = lookup("", "pods")
)

type env struct {
	t  *testing.T
	c  *client.Client
	ns string
}

// startEnv starts a real server with its built-in Job controller; the
// test plays the node (no scheduler): it writes pod phases through the
// status subresource.
func startEnv(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("a real API server")
	}
	c := servertest.Start(t, servertest.Options{DisabledControllers: []string{"scheduler", "nodelifecycle"}}).Client()
	return &env{t: t, c: c, ns: "default"}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) createJob(name string, mutate func(*api.Job)) *api.Job {
	e.t.Helper()
	j := &api.Job{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{
			RestartPolicy: api.RestartPolicyNever,
			Containers:    []api.Container{{Name: "pi", Image: "perl:5.34.0", Command: []string{"perl", "-e", "1"}}},
		}}},
	}
	if mutate != nil {
		mutate(j)
	}
	if err := e.c.Create(ctx(e.t), jobsInfo, e.ns, j); err != nil {
		e.t.Fatalf("create job: %v", err)
	}
	return j
}

func (e *env) getJob(name string) (*api.Job, bool) {
	var j api.Job
	err := e.c.Get(ctx(e.t), jobsInfo, e.ns, name, &j)
	if client.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		e.t.Fatalf("get job: %v", err)
	}
	return &j, true
}

func (e *env) pods(jobName string) []api.Pod {
	var l api.PodList
	if err := e.c.List(ctx(e.t), podsInfo, e.ns, client.ListOptions{LabelSelector: api.JobNameLabel + "=" + jobName}, &l); err != nil {
		e.t.Fatalf("list pods: %v", err)
	}
	return l.Items
}

func (e *env) activePods(jobName string) []api.Pod {
	var out []api.Pod
	for _, p := range e.pods(jobName) {
		if p.DeletionTimestamp == nil && p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// finish writes a pod's end through pods/status, as a node would.
func (e *env) finish(p api.Pod, exit int32) {
	e.t.Helper()
	phase := api.PodSucceeded
	if exit != 0 {
		phase = api.PodFailed
	}
	for try := 0; ; try++ {
		var cur api.Pod
		if err := e.c.Get(ctx(e.t), podsInfo, p.Namespace, p.Name, &cur); err != nil {
			e.t.Fatalf("get pod: %v", err)
		}
		cur.Status.Phase = phase
		cur.Status.ContainerStatuses = []api.ContainerStatus{{Name: "pi", Image: "perl:5.34.0", State: api.ContainerState{
			Terminated: &api.ContainerStateTerminated{ExitCode: exit, Reason: "Completed", FinishedAt: api.Now()}}}}
		err := e.c.Update(ctx(e.t), podsInfo, p.Namespace, &cur, "status")
		if err == nil {
			return
		}
		if !client.IsConflict(err) || try > 20 {
			e.t.Fatalf("finish pod %s: %v", p.Name, err)
		}
	}
}

func hasCondition(j *api.Job, typ string) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}

func TestJobRunsToCompletion(t *testing.T) {
	e := startEnv(t)
	created := e.createJob("pi", func(j *api.Job) { j.Spec.Completions = ptr[int32](2) })
	for i := range 2 {
		var active []api.Pod
		e.waitFor(fmt.Sprintf("pod %d", i+1), func() bool { active = e.activePods("pi"); return len(active) == 1 })
		p := active[0]
		ref := api.ControllerRef(&p.ObjectMeta)
		if ref == nil || ref.UID != created.UID || ref.Kind != "Job" || !slices.Contains(p.Finalizers, api.JobTrackingFinalizer) {
			t.Fatalf("pod %s: owner %+v finalizers %v", p.Name, ref, p.Finalizers)
		}
		if p.Labels[api.JobControllerUIDLabel] != created.UID || p.GenerateName != "pi-" {
			t.Fatalf("pod %s: labels %v generateName %q", p.Name, p.Labels, p.GenerateName)
		}
		e.finish(p, 0)
	}
	var j *api.Job
	e.waitFor("Complete", func() bool { j, _ = e.getJob("pi"); return hasCondition(j, api.JobComplete) })
	if j.Status.Succeeded != 2 || j.Status.Failed != 0 || j.Status.Active != 0 || j.Status.CompletionTime == nil ||
		j.Status.StartTime == nil || !hasCondition(j, api.JobSuccessCriteriaMet) {
		t.Fatalf("status %+v", j.Status)
	}
	if u := j.Status.UncountedTerminatedPods; u == nil || len(u.Succeeded)+len(u.Failed) != 0 {
		t.Fatalf("uncounted %+v", u)
	}
	for _, p := range e.pods("pi") {
		if slices.Contains(p.Finalizers, api.JobTrackingFinalizer) {
			t.Errorf("pod %s keeps the job-tracking finalizer", p.Name)
		}
	}
	// The Job's pods go with it (garbage collection of owned pods).
	if err := e.c.Delete(ctx(t), jobsInfo, e.ns, "pi", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("pods collected", func() bool { return len(e.pods("pi")) == 0 })
}

func TestJobIndexed(t *testing.T) {
	e := startEnv(t)
	e.createJob("idx", func(j *api.Job) {
		j.Spec.CompletionMode, j.Spec.Completions, j.Spec.Parallelism = ptr(api.IndexedCompletion), ptr[int32](3), ptr[int32](3)
	})
	var active []api.Pod
	e.waitFor("3 pods", func() bool { active = e.activePods("idx"); return len(active) == 3 })
	seen := map[string]bool{}
	for _, p := range active {
		ix := p.Annotations[api.JobCompletionIndexAnnotation]
		seen[ix] = true
		if p.Spec.Hostname != "idx-"+ix || p.Labels[api.JobCompletionIndexAnnotation] != ix {
			t.Errorf("pod %s: hostname %q labels %v", p.Name, p.Spec.Hostname, p.Labels)
		}
		env := p.Spec.Containers[0].Env
		if len(env) != 1 || env[0].Name != job.CompletionIndexEnv {
			t.Errorf("pod %s: env %+v", p.Name, env)
		}
	}
	if len(seen) != 3 || !seen["0"] || !seen["1"] || !seen["2"] {
		t.Fatalf("indexes %v", seen)
	}
	for _, p := range active {
		e.finish(p, 0)
	}
	var j *api.Job
	e.waitFor("Complete", func() bool { j, _ = e.getJob("idx"); return hasCondition(j, api.JobComplete) })
	if j.Status.CompletedIndexes != "0-2" || j.Status.Succeeded != 3 {
		t.Fatalf("status %+v", j.Status)
	}
}

func TestJobBackoffLimitAndTTL(t *testing.T) {
	e := startEnv(t)
	e.createJob("fail", func(j *api.Job) {
		j.Spec.BackoffLimit, j.Spec.TTLSecondsAfterFinished = ptr[int32](0), ptr[int32](1)
	})
	var active []api.Pod
	e.waitFor("a pod", func() bool { active = e.activePods("fail"); return len(active) == 1 })
	e.finish(active[0], 3)
	var j *api.Job
	e.waitFor("Failed", func() bool {
		var ok bool
		j, ok = e.getJob("fail")
		return !ok || hasCondition(j, api.JobFailed)
	})
	if j != nil {
		var failed *api.JobCondition
		for i := range j.Status.Conditions {
			if j.Status.Conditions[i].Type == api.JobFailed {
				failed = &j.Status.Conditions[i]
			}
		}
		if failed.Reason != api.JobReasonBackoffLimitExceeded || j.Status.Failed != 1 || j.Status.CompletionTime != nil {
			t.Fatalf("status %+v", j.Status)
		}
	}
	// ttlSecondsAfterFinished: 1 deletes the Job a second later.
	e.waitFor("job deleted by its TTL", func() bool { _, ok := e.getJob("fail"); return !ok })
}

// TestJobDeletedWhileRunning: the garbage collector deletes the running
// pod of a deleted Job, and the controller releases its job-tracking
// finalizer (no Job is left to count it), so the pod goes.
func TestJobDeletedWhileRunning(t *testing.T) {
	e := startEnv(t)
	e.createJob("gone", nil)
	e.waitFor("a pod", func() bool { return len(e.activePods("gone")) == 1 })
	if err := e.c.Delete(ctx(t), jobsInfo, e.ns, "gone", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the pod gone", func() bool { return len(e.pods("gone")) == 0 })
}

func TestJobSuspend(t *testing.T) {
	e := startEnv(t)
	e.createJob("sus", func(j *api.Job) { j.Spec.Suspend = ptr(true) })
	var j *api.Job
	e.waitFor("Suspended", func() bool { j, _ = e.getJob("sus"); return hasCondition(j, api.JobSuspended) })
	if n := len(e.pods("sus")); n != 0 || j.Status.StartTime != nil {
		t.Fatalf("suspended job: %d pods, startTime %v", n, j.Status.StartTime)
	}
	patch := []byte(`{"spec":{"suspend":false}}`)
	if err := e.c.Patch(ctx(t), jobsInfo, e.ns, "sus", client.MergePatchType, patch, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor("a pod after resume", func() bool { return len(e.activePods("sus")) == 1 })
	if err := e.c.Patch(ctx(t), jobsInfo, e.ns, "sus", client.MergePatchType, []byte(`{"spec":{"suspend":true}}`), nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor("pod deleted on suspend", func() bool { return len(e.activePods("sus")) == 0 })
}

func ptr[T any](v T) *T { return &v }

// TestJobManualSelectorAdopts: a Job with manualSelector adopts a running
// orphan pod its selector matches (ownerReference and tracking finalizer
// added, no second pod made), counts it when it succeeds, and releases a
// pod relabelled out of its selector.
func TestJobManualSelectorAdopts(t *testing.T) {
	e := startEnv(t)
	orphan := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: "orphan", Namespace: e.ns, Labels: map[string]string{"batch": "x", api.JobNameLabel: "manual"}},
		Spec: api.PodSpec{RestartPolicy: api.RestartPolicyNever,
			Containers: []api.Container{{Name: "pi", Image: "perl:5.34.0"}}},
	}
	if err := e.c.Create(ctx(t), podsInfo, e.ns, orphan); err != nil {
		t.Fatal(err)
	}
	j := e.createJob("manual", func(j *api.Job) {
		j.Spec.ManualSelector = ptr(true)
		j.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"batch": "x"}}
		j.Spec.Template.Labels = map[string]string{"batch": "x", api.JobNameLabel: "manual"}
		j.Spec.Parallelism = ptr[int32](1)
	})
	var p api.Pod
	e.waitFor("the orphan adopted", func() bool {
		if err := e.c.Get(ctx(t), podsInfo, e.ns, "orphan", &p); err != nil {
			return false
		}
		ref := api.ControllerRef(&p.ObjectMeta)
		return ref != nil && ref.UID == j.UID && slices.Contains(p.Finalizers, api.JobTrackingFinalizer)
	})
	e.waitFor("status active 1", func() bool { got, _ := e.getJob("manual"); return got.Status.Active == 1 })
	if n := len(e.pods("manual")); n != 1 {
		t.Fatalf("%d pods, want only the adopted one", n)
	}
	e.finish(p, 0)
	e.waitFor("Complete", func() bool {
		got, _ := e.getJob("manual")
		return hasCondition(got, api.JobComplete) && got.Status.Succeeded == 1
	})

	// Release: a second manual Job adopts a pod, which is then relabelled.
	other := api.DeepCopy(orphan)
	other.Name, other.Labels = "stray", map[string]string{"batch": "y", api.JobNameLabel: "manual-y"}
	if err := e.c.Create(ctx(t), podsInfo, e.ns, other); err != nil {
		t.Fatal(err)
	}
	jy := e.createJob("manual-y", func(j *api.Job) {
		j.Spec.ManualSelector = ptr(true)
		j.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"batch": "y"}}
		j.Spec.Template.Labels = map[string]string{"batch": "y", api.JobNameLabel: "manual-y"}
		j.Spec.Parallelism = ptr[int32](1)
	})
	e.waitFor("stray adopted", func() bool {
		var s api.Pod
		_ = e.c.Get(ctx(t), podsInfo, e.ns, "stray", &s)
		ref := api.ControllerRef(&s.ObjectMeta)
		return ref != nil && ref.UID == jy.UID
	})
	if err := e.c.Patch(ctx(t), podsInfo, e.ns, "stray", client.MergePatchType, []byte(`{"metadata":{"labels":{"batch":"gone"}}}`), nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor("stray released", func() bool {
		var s api.Pod
		_ = e.c.Get(ctx(t), podsInfo, e.ns, "stray", &s)
		return api.ControllerRef(&s.ObjectMeta) == nil && !slices.Contains(s.Finalizers, api.JobTrackingFinalizer)
	})
}
