package cronjob

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 30, 0, time.UTC)

func ptrTo[T any](v T) *T { return &v }

func newCronJob(schedule string, mutate func(*api.CronJob)) *api.CronJob {
	cj := &api.CronJob{
		ObjectMeta: api.ObjectMeta{Name: "backup", Namespace: "default", UID: "cj-uid", CreationTimestamp: api.Time{Time: t0.Add(-30 * time.Second)}},
		Spec: api.CronJobSpec{Schedule: schedule, JobTemplate: api.JobTemplateSpec{
			ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "backup"}},
			Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{RestartPolicy: api.RestartPolicyOnFailure,
				Containers: []api.Container{{Name: "b", Image: "restic"}}}}}}},
	}
	api.DefaultCronJob(cj)
	if mutate != nil {
		mutate(cj)
	}
	return cj
}

func at(t time.Time) *api.Time { return &api.Time{Time: t} }

func ownedJob(name string, cond string, start time.Time) *api.Job {
	yes := true
	j := &api.Job{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + name,
		OwnerReferences: []api.OwnerReference{{Kind: "CronJob", APIVersion: "batch/v1", Name: "backup", UID: "cj-uid", Controller: &yes}}},
		Status: api.JobStatus{StartTime: at(start)}}
	if cond != "" {
		j.Status.Conditions = []api.JobCondition{{Type: cond, Status: api.ConditionTrue}}
		if cond == api.JobComplete {
			j.Status.CompletionTime = at(start.Add(time.Minute))
		}
	}
	return j
}

type summary struct {
	create, deletes, active, events string
	lastSuccess                     string
	requeue                         time.Duration
}

func summarize(p Plan) summary {
	var s summary
	if p.Create != nil {
		s.create = p.Create.Name + " " + p.Create.Annotations[api.CronJobScheduledTimestampAnnotation]
	}
	for _, j := range p.Delete {
		s.deletes += j.Name + " "
	}
	for _, r := range p.Status.Active {
		s.active += r.Name + " "
	}
	for _, e := range p.Events {
		s.events += e.Reason + " "
	}
	if p.Status.LastSuccessfulTime != nil {
		s.lastSuccess = p.Status.LastSuccessfulTime.Format("15:04")
	}
	s.requeue = p.RequeueAfter
	return s
}

func minutes(t time.Time) string { return fmt.Sprint(t.Unix() / 60) }

func TestReconcile(t *testing.T) {
	noon := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		cj   *api.CronJob
		jobs []*api.Job
		now  time.Time
		want summary
	}{
		{name: "before the first schedule: wait for it", cj: newCronJob("*/5 * * * *", nil), now: t0.Add(3 * time.Minute),
			want: summary{requeue: time.Minute + 30*time.Second + nextScheduleDelta}},
		{name: "schedule due: a Job named by its minute", cj: newCronJob("*/5 * * * *", nil), now: noon.Add(5*time.Minute + 10*time.Second),
			want: summary{create: "backup-" + minutes(noon.Add(5*time.Minute)) + " 2026-05-01T12:05:00Z", requeue: 4*time.Minute + 50*time.Second + nextScheduleDelta}},
		{name: "already scheduled", cj: newCronJob("*/5 * * * *", func(c *api.CronJob) { c.Status.LastScheduleTime = at(noon.Add(5 * time.Minute)) }),
			now:  noon.Add(7 * time.Minute),
			want: summary{requeue: 3*time.Minute + nextScheduleDelta}},
		{name: "macro @hourly", cj: newCronJob("@hourly", nil), now: noon.Add(time.Hour),
			want: summary{create: "backup-" + minutes(noon.Add(time.Hour)) + " 2026-05-01T13:00:00Z", requeue: time.Hour + nextScheduleDelta}},
		{name: "after a long outage: only the latest, with a warning", cj: newCronJob("* * * * *", func(c *api.CronJob) { c.Status.LastScheduleTime = at(noon.Add(-3 * time.Hour)) }),
			now:  noon.Add(30 * time.Second),
			want: summary{create: "backup-" + minutes(noon) + " 2026-05-01T12:00:00Z", events: "TooManyMissedTimes ", requeue: 30*time.Second + nextScheduleDelta}},
		{name: "a few missed: only the latest, no warning", cj: newCronJob("* * * * *", func(c *api.CronJob) { c.Status.LastScheduleTime = at(noon.Add(-10 * time.Minute)) }),
			now:  noon.Add(30 * time.Second),
			want: summary{create: "backup-" + minutes(noon) + " 2026-05-01T12:00:00Z", requeue: 30*time.Second + nextScheduleDelta}},
		{name: "startingDeadlineSeconds: missed schedules outside it do not count", cj: newCronJob("0 * * * *", func(c *api.CronJob) {
			c.Status.LastScheduleTime = at(noon.Add(-2 * time.Hour))
			c.Spec.StartingDeadlineSeconds = ptrTo[int64](60)
		}), now: noon.Add(30 * time.Minute),
			want: summary{requeue: 30*time.Minute + nextScheduleDelta}},
		{name: "startingDeadlineSeconds: a schedule within it starts", cj: newCronJob("0 * * * *", func(c *api.CronJob) {
			c.Status.LastScheduleTime = at(noon.Add(-2 * time.Hour))
			c.Spec.StartingDeadlineSeconds = ptrTo[int64](60)
		}), now: noon.Add(30 * time.Second),
			want: summary{create: "backup-" + minutes(noon) + " 2026-05-01T12:00:00Z", requeue: 59*time.Minute + 30*time.Second + nextScheduleDelta}},
		{name: "Forbid with a running Job", cj: newCronJob("* * * * *", func(c *api.CronJob) {
			c.Spec.ConcurrencyPolicy = api.ForbidConcurrent
			c.Status.LastScheduleTime = at(noon.Add(-time.Minute))
			c.Status.Active = []api.ObjectReference{{Name: "backup-1", UID: "uid-backup-1"}}
		}), jobs: []*api.Job{ownedJob("backup-1", "", noon.Add(-time.Minute))}, now: noon.Add(time.Second),
			want: summary{active: "backup-1 ", events: "JobAlreadyActive ", requeue: 59*time.Second + nextScheduleDelta}},
		{name: "Replace deletes the running Job", cj: newCronJob("* * * * *", func(c *api.CronJob) {
			c.Spec.ConcurrencyPolicy = api.ReplaceConcurrent
			c.Status.LastScheduleTime = at(noon.Add(-time.Minute))
			c.Status.Active = []api.ObjectReference{{Name: "backup-1", UID: "uid-backup-1"}}
		}), jobs: []*api.Job{ownedJob("backup-1", "", noon.Add(-time.Minute))}, now: noon.Add(time.Second),
			want: summary{create: "backup-" + minutes(noon) + " 2026-05-01T12:00:00Z", deletes: "backup-1 ", requeue: 59*time.Second + nextScheduleDelta}},
		{name: "Allow runs concurrently", cj: newCronJob("* * * * *", func(c *api.CronJob) {
			c.Status.LastScheduleTime = at(noon.Add(-time.Minute))
			c.Status.Active = []api.ObjectReference{{Name: "backup-1", UID: "uid-backup-1"}}
		}), jobs: []*api.Job{ownedJob("backup-1", "", noon.Add(-time.Minute))}, now: noon.Add(time.Second),
			want: summary{create: "backup-" + minutes(noon) + " 2026-05-01T12:00:00Z", active: "backup-1 ", requeue: 59*time.Second + nextScheduleDelta}},
		{name: "suspended: nothing, no requeue", cj: newCronJob("* * * * *", func(c *api.CronJob) { c.Spec.Suspend = ptrTo(true) }),
			now: noon.Add(5 * time.Minute), want: summary{}},
		{name: "a finished Job leaves active; lastSuccessfulTime", cj: newCronJob("0 0 * * *", func(c *api.CronJob) {
			c.Status.LastScheduleTime = at(noon.Add(-12 * time.Hour))
			c.Status.Active = []api.ObjectReference{{Name: "backup-1", UID: "uid-backup-1"}, {Name: "gone", UID: "uid-gone"}}
		}), jobs: []*api.Job{ownedJob("backup-1", api.JobComplete, noon.Add(-12*time.Hour))}, now: noon,
			want: summary{events: "SawCompletedJob ", lastSuccess: "00:01", requeue: 12*time.Hour + nextScheduleDelta}},
		{name: "a running Job of ours missing from active joins it", cj: newCronJob("0 0 * * *", func(c *api.CronJob) {
			c.Status.LastScheduleTime = at(noon.Add(-12 * time.Hour))
		}), jobs: []*api.Job{ownedJob("backup-1", "", noon.Add(-12*time.Hour))}, now: noon,
			want: summary{active: "backup-1 ", requeue: 12*time.Hour + nextScheduleDelta}},
		{name: "history limits delete the oldest", cj: newCronJob("0 0 * * *", func(c *api.CronJob) {
			c.Status.LastScheduleTime = at(noon.Add(-12 * time.Hour))
			c.Spec.SuccessfulJobsHistoryLimit = ptrTo[int32](2)
		}), jobs: []*api.Job{
			ownedJob("s3", api.JobComplete, noon.Add(-3*time.Hour)), ownedJob("s1", api.JobComplete, noon.Add(-5*time.Hour)),
			ownedJob("s2", api.JobComplete, noon.Add(-4*time.Hour)), ownedJob("s4", api.JobComplete, noon.Add(-2*time.Hour)),
			ownedJob("f1", api.JobFailed, noon.Add(-5*time.Hour)), ownedJob("f2", api.JobFailed, noon.Add(-time.Hour)),
		}, now: noon,
			want: summary{deletes: "s1 s2 f1 ", lastSuccess: "10:01", requeue: 12*time.Hour + nextScheduleDelta}},
		{name: "time zone", cj: newCronJob("0 9 * * *", func(c *api.CronJob) { c.Spec.TimeZone = ptrTo("America/New_York") }),
			now:  time.Date(2026, 5, 1, 13, 0, 30, 0, time.UTC),
			want: summary{create: "backup-" + minutes(time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)) + " 2026-05-01T09:00:00-04:00", requeue: 24*time.Hour - 30*time.Second + nextScheduleDelta}},
		{name: "unknown time zone at run time", cj: newCronJob("0 9 * * *", func(c *api.CronJob) { c.Spec.TimeZone = ptrTo("Mars/Olympus") }),
			now: noon.Add(24 * time.Hour), want: summary{events: "UnknownTimeZone "}},
		{name: "unparseable schedule at run time", cj: newCronJob("61 * * * *", nil),
			now: noon.Add(24 * time.Hour), want: summary{events: "UnparseableSchedule "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(Reconcile(Input{CronJob: tt.cj, Jobs: tt.jobs, Now: tt.now}))
			if got != tt.want {
				t.Errorf("plan\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestJobFromTemplate(t *testing.T) {
	cj := newCronJob("@daily", func(c *api.CronJob) { c.Spec.JobTemplate.Annotations = map[string]string{"a": "b"} })
	p := Reconcile(Input{CronJob: cj, Now: time.Date(2026, 5, 2, 0, 0, 5, 0, time.UTC)})
	j := p.Create
	if j == nil {
		t.Fatal("no job")
	}
	ref := api.ControllerRef(&j.ObjectMeta)
	if ref == nil || ref.UID != "cj-uid" || ref.Kind != "CronJob" || ref.APIVersion != "batch/v1" || *ref.BlockOwnerDeletion != true {
		t.Fatalf("owner %+v", ref)
	}
	if j.Labels["app"] != "backup" || j.Annotations["a"] != "b" || j.Spec.Template.Spec.Containers[0].Image != "restic" {
		t.Fatalf("job %+v", j.ObjectMeta)
	}
	if !strings.HasPrefix(j.Name, "backup-") || len(j.Name) != len("backup-")+8 {
		t.Fatalf("name %q", j.Name)
	}
	// The template is copied, not shared.
	j.Labels["app"] = "x"
	if cj.Spec.JobTemplate.Labels["app"] != "backup" {
		t.Fatal("template shared with the job")
	}
}
