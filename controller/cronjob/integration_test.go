package cronjob_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/record"
	"github.com/skiff-dev/skiff/controller/cronjob"
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
	cronJobsInfo = lookup("batch", "cronjobs")
	jobsInfo     = lookup("batch", "jobs")
	podsInfo     = lookup("", "pods")
)

// fakeClock is the controller's clock; the test moves it.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) Now() time.Time  { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) Set(t time.Time) { f.mu.Lock(); defer f.mu.Unlock(); f.t = t }

func ctxT(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCronJobCreatesJobsOnAFakeClock runs the CronJob controller on a fake
// clock against a real server whose Job controller runs the Jobs' pods
// (the test plays the node): each minute the clock moves, one Job named
// <cronjob>-<minutes> is created, its completion is seen, and the history
// limit deletes the older one.
func TestCronJobCreatesJobsOnAFakeClock(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server")
	}
	srv := servertest.Start(t, servertest.Options{DisabledControllers: []string{"cronjob", "scheduler", "nodelifecycle"}})
	c := srv.Client()
	clock := &fakeClock{}
	cjs := client.NewInformer(c, cronJobsInfo, client.InformerOptions{})
	jobs := client.NewInformer(c, jobsInfo, client.InformerOptions{})
	ctl := cronjob.New(cronjob.Deps{Client: c, CronJobs: cjs, Jobs: jobs, Now: clock.Now,
		Log: slog.New(slog.DiscardHandler)}, cronjob.Options{Workers: 2, BackoffBase: 20 * time.Millisecond, BackoffMax: time.Second})

	cj := &api.CronJob{
		ObjectMeta: api.ObjectMeta{Name: "backup-daily", Namespace: "default"},
		Spec: api.CronJobSpec{Schedule: "* * * * *", SuccessfulJobsHistoryLimit: ptr[int32](1),
			JobTemplate: api.JobTemplateSpec{Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{
				RestartPolicy: api.RestartPolicyOnFailure, Containers: []api.Container{{Name: "b", Image: "restic"}}}}}}},
	}
	if err := c.Create(ctxT(t), cronJobsInfo, "default", cj); err != nil {
		t.Fatal(err)
	}
	// The clock starts just before the first schedule after creation.
	first := cj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
	clock.Set(first.Add(-time.Second))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{cjs.Run, jobs.Run, ctl.Run} {
		wg.Go(func() {
			if err := run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait() })

	getCJ := func() *api.CronJob {
		var got api.CronJob
		if err := c.Get(ctxT(t), cronJobsInfo, "default", "backup-daily", &got); err != nil {
			t.Fatal(err)
		}
		return &got
	}
	getJob := func(name string) (*api.Job, bool) {
		var j api.Job
		err := c.Get(ctxT(t), jobsInfo, "default", name, &j)
		if client.IsNotFound(err) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return &j, true
	}
	// Before the schedule: no Job.
	time.Sleep(200 * time.Millisecond)
	ctl.Resync()
	time.Sleep(200 * time.Millisecond)
	var l api.JobList
	if err := c.List(ctxT(t), jobsInfo, "default", client.ListOptions{}, &l); err != nil || len(l.Items) != 0 {
		t.Fatalf("jobs before the schedule: %d (%v)", len(l.Items), err)
	}

	var names []string
	for m := range 2 {
		sched := first.Add(time.Duration(m) * time.Minute)
		clock.Set(sched.Add(5 * time.Second))
		ctl.Resync()
		name := fmt.Sprintf("backup-daily-%d", sched.Unix()/60)
		names = append(names, name)
		var j *api.Job
		waitFor(t, "job "+name, func() bool { var ok bool; j, ok = getJob(name); return ok })
		if j.Annotations[api.CronJobScheduledTimestampAnnotation] != sched.In(time.Local).Format(time.RFC3339) {
			t.Errorf("scheduled timestamp %q, want %v", j.Annotations[api.CronJobScheduledTimestampAnnotation], sched)
		}
		if ref := api.ControllerRef(&j.ObjectMeta); ref == nil || ref.Kind != "CronJob" || ref.Name != "backup-daily" {
			t.Errorf("owner %+v", ref)
		}
		waitFor(t, "active "+name, func() bool {
			s := getCJ().Status
			return len(s.Active) == 1 && s.Active[0].Name == name && s.LastScheduleTime != nil && s.LastScheduleTime.Equal(sched)
		})
		// Play the node: the Job's pod succeeds.
		var pods api.PodList
		waitFor(t, "pod of "+name, func() bool {
			if err := c.List(ctxT(t), podsInfo, "default", client.ListOptions{LabelSelector: api.JobNameLabel + "=" + name}, &pods); err != nil {
				t.Fatal(err)
			}
			return len(pods.Items) == 1
		})
		p := pods.Items[0]
		p.Status.Phase = api.PodSucceeded
		p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "b", Image: "restic", State: api.ContainerState{
			Terminated: &api.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: api.Now()}}}}
		if err := c.Update(ctxT(t), podsInfo, "default", &p, "status"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, name+" complete and off the active list", func() bool {
			s := getCJ().Status
			return len(s.Active) == 0 && s.LastSuccessfulTime != nil
		})
	}
	// successfulJobsHistoryLimit 1: the first Job is deleted.
	waitFor(t, "history limit", func() bool { _, ok := getJob(names[0]); return !ok })
	if _, ok := getJob(names[1]); !ok {
		t.Fatalf("the newest job %s is gone", names[1])
	}
}

// startController runs a CronJob controller (with an Event recorder) on
// c until the returned stop is called.
func startController(t *testing.T, c *client.Client, clock *fakeClock) (*cronjob.Controller, func()) {
	cjs := client.NewInformer(c, cronJobsInfo, client.InformerOptions{})
	jobs := client.NewInformer(c, jobsInfo, client.InformerOptions{})
	rec := record.NewRecorder(c, "cronjob-controller", slog.New(slog.DiscardHandler))
	ctl := cronjob.New(cronjob.Deps{Client: c, CronJobs: cjs, Jobs: jobs, Now: clock.Now, Recorder: rec,
		Log: slog.New(slog.DiscardHandler)}, cronjob.Options{Workers: 2, BackoffBase: 20 * time.Millisecond, BackoffMax: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{cjs.Run, jobs.Run, rec.Run, ctl.Run} {
		wg.Go(func() {
			if err := run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	return ctl, func() { cancel(); wg.Wait() }
}

// TestCronJobAfterARestart: the server (and controller) is down for 150
// minutes of an every-minute CronJob; after the restart only the most
// recent missed schedule starts, with a TooManyMissedTimes warning.
func TestCronJobAfterARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server")
	}
	srv := servertest.Start(t, servertest.Options{DisabledControllers: []string{"cronjob", "job", "scheduler", "nodelifecycle"}})
	c := srv.Client()
	clock := &fakeClock{}
	cj := &api.CronJob{
		ObjectMeta: api.ObjectMeta{Name: "every-minute", Namespace: "default"},
		Spec: api.CronJobSpec{Schedule: "* * * * *", JobTemplate: api.JobTemplateSpec{Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{
			RestartPolicy: api.RestartPolicyNever, Containers: []api.Container{{Name: "c", Image: "busybox"}}}}}}},
	}
	if err := c.Create(ctxT(t), cronJobsInfo, "default", cj); err != nil {
		t.Fatal(err)
	}
	first := cj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
	clock.Set(first.Add(time.Second))
	ctl, stop := startController(t, c, clock)
	ctl.Resync()
	listJobs := func() []api.Job {
		var l api.JobList
		if err := c.List(ctxT(t), jobsInfo, "default", client.ListOptions{}, &l); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	waitFor(t, "the first job", func() bool { return len(listJobs()) == 1 })
	waitFor(t, "lastScheduleTime", func() bool {
		var got api.CronJob
		if err := c.Get(ctxT(t), cronJobsInfo, "default", "every-minute", &got); err != nil {
			t.Fatal(err)
		}
		return got.Status.LastScheduleTime != nil && got.Status.LastScheduleTime.Equal(first)
	})
	stop()

	srv.Restart()
	c = srv.Client()
	latest := first.Add(150 * time.Minute)
	clock.Set(latest.Add(20 * time.Second))
	ctl, stop = startController(t, c, clock)
	defer stop()
	ctl.Resync()
	want := fmt.Sprintf("every-minute-%d", latest.Unix()/60)
	waitFor(t, "the job of the latest schedule", func() bool {
		for _, j := range listJobs() {
			if j.Name == want {
				return true
			}
		}
		return false
	})
	waitFor(t, "TooManyMissedTimes", func() bool {
		var l api.EventList
		if err := c.List(ctxT(t), lookup("", "events"), "default", client.ListOptions{}, &l); err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Items {
			if e.Reason == cronjob.EventTooManyMissedTimes && e.InvolvedObject.Name == "every-minute" {
				return true
			}
		}
		return false
	})
	time.Sleep(300 * time.Millisecond)
	ctl.Resync()
	time.Sleep(300 * time.Millisecond)
	if n := len(listJobs()); n != 2 {
		t.Fatalf("%d jobs after the restart, want 2 (the first and the latest missed)", n)
	}
}

func ptr[T any](v T) *T { return &v }
