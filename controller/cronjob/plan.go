package cronjob

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/skiff-dev/skiff/api"
)

// Kubernetes' constants of the CronJob controller.
const (
	// tooManyMissed is how many missed schedules make the controller warn
	// (it still starts only the most recent one).
	tooManyMissed = 100
	// nextScheduleDelta is added to the wait for the next schedule, so
	// that the controller wakes just after it.
	nextScheduleDelta = 100 * time.Millisecond
)

// Event reasons, as Kubernetes' CronJob controller.
const (
	EventSuccessfulCreate    = "SuccessfulCreate"
	EventFailedCreate        = "FailedCreate"
	EventSuccessfulDelete    = "SuccessfulDelete"
	EventFailedDelete        = "FailedDelete"
	EventSawCompletedJob     = "SawCompletedJob"
	EventMissSchedule        = "MissSchedule"
	EventTooManyMissedTimes  = "TooManyMissedTimes"
	EventJobAlreadyActive    = "JobAlreadyActive"
	EventUnknownTimeZone     = "UnknownTimeZone"
	EventUnparseableSchedule = "UnparseableSchedule"
	EventInvalidSchedule     = "InvalidSchedule"
)

// Input is what one reconcile of a CronJob looks at.
type Input struct {
	CronJob *api.CronJob
	// Jobs are the Jobs the CronJob controls.
	Jobs []*api.Job
	Now  time.Time
}

// Event is an Event about the CronJob.
type Event struct{ Type, Reason, Message string }

// Plan is what Reconcile decided.
type Plan struct {
	// Create is the Job to create, nil for none.
	Create *api.Job
	// ScheduledTime is Create's scheduled time.
	ScheduledTime time.Time
	// Delete are Jobs to delete (Replace, history limits).
	Delete []*api.Job
	// Status is the CronJob's status after the deletes (and, if Create
	// succeeds, the caller adds it to active and sets lastScheduleTime).
	Status api.CronJobStatus
	Events []Event
	// RequeueAfter is when the next schedule is due; 0 for never (a
	// suspended CronJob, an unusable schedule or time zone).
	RequeueAfter time.Duration
}

func (p *Plan) event(typ, reason, format string, args ...any) {
	p.Events = append(p.Events, Event{typ, reason, fmt.Sprintf(format, args...)})
}

func jobCondition(j *api.Job, typ string) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}

// finished returns the condition a finished Job has (Complete or Failed).
func finished(j *api.Job) (string, bool) {
	switch {
	case jobCondition(j, api.JobComplete):
		return api.JobComplete, true
	case jobCondition(j, api.JobFailed):
		return api.JobFailed, true
	}
	return "", false
}

// JobName is the name of the Job scheduled at t: <cronjob>-<minutes since
// the Unix epoch>, as Kubernetes names them.
func JobName(cj *api.CronJob, t time.Time) string {
	return cj.Name + "-" + strconv.FormatInt(t.Unix()/60, 10)
}

// Schedule parses the CronJob's schedule in its time zone, as Kubernetes
// does: with timeZone set, "TZ=<zone> " is put before the schedule.
func Schedule(cj *api.CronJob) (cron.Schedule, *time.Location, error) {
	loc := time.Local
	if tz := cj.Spec.TimeZone; tz != nil {
		l, err := time.LoadLocation(*tz)
		if err != nil {
			return nil, nil, fmt.Errorf("unknown time zone %s: %w", *tz, err)
		}
		loc = l
	}
	s := cj.Spec.Schedule
	if cj.Spec.TimeZone != nil && !strings.Contains(s, "TZ") {
		s = "TZ=" + *cj.Spec.TimeZone + " " + s
	}
	sched, err := api.ParseSchedule(s)
	if err != nil {
		return nil, nil, err
	}
	return sched, loc, nil
}

// mostRecentScheduleTime is Kubernetes' computation of the schedules
// missed since the last one (or the CronJob's creation): the earliest time
// considered (moved up to now - startingDeadlineSeconds when includeDeadline
// and that is later), the most recent schedule at or before now (nil when
// none), and how many were missed, estimated from the interval between
// two schedules rather than enumerated.
func mostRecentScheduleTime(cj *api.CronJob, now time.Time, sched cron.Schedule, includeDeadline bool) (time.Time, *time.Time, int64, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if includeDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		if d := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second); d.After(earliest) {
			earliest = d
		}
	}
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	if now.Before(t1) {
		return earliest, nil, 0, nil
	}
	if now.Before(t2) {
		return earliest, &t1, 1, nil
	}
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return earliest, nil, 0, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	missed := int64(now.Sub(t1).Seconds())/between + 1
	var recent time.Time
	from := t1.Add(time.Duration((missed-2)*between) * time.Second)
	for t := sched.Next(from); !t.After(now); t = sched.Next(t) {
		recent = t
	}
	if recent.IsZero() {
		recent = t1
	}
	return earliest, &recent, missed, nil
}

// nextWait is how long until just after the next schedule.
func nextWait(cj *api.CronJob, now time.Time, sched cron.Schedule) time.Duration {
	earliest, recent, _, err := mostRecentScheduleTime(cj, now, sched, false)
	if err != nil {
		return 0
	}
	from := earliest
	if recent != nil {
		from = *recent
	}
	next := sched.Next(from)
	if next.IsZero() {
		return 0
	}
	return next.Add(nextScheduleDelta).Sub(now)
}

func ref(j *api.Job) api.ObjectReference {
	return api.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: j.Namespace, Name: j.Name, UID: j.UID, ResourceVersion: j.ResourceVersion}
}

// Reconcile decides, for one CronJob and its Jobs at now, which Job to
// create and which to delete, and the CronJob's status. It is pure.
func Reconcile(in Input) Plan {
	cj, now := in.CronJob, in.Now
	var plan Plan
	st := api.DeepCopy(cj).Status
	byUID := map[string]*api.Job{}
	for _, j := range in.Jobs {
		byUID[j.UID] = j
	}

	// ---- Active list: finished and vanished Jobs leave it; running Jobs
	// of the CronJob not in it join it. ----
	var active []api.ObjectReference
	inActive := map[string]bool{}
	for _, r := range st.Active {
		j, ok := byUID[r.UID]
		if !ok {
			continue // deleted, or no longer ours
		}
		if cond, done := finished(j); done {
			plan.event(api.EventTypeNormal, EventSawCompletedJob, "Saw completed job: %s, condition: %s", j.Name, cond)
			continue
		}
		active = append(active, r)
		inActive[r.UID] = true
	}
	for _, j := range in.Jobs {
		if cond, done := finished(j); done {
			if cond == api.JobComplete && j.Status.CompletionTime != nil &&
				(st.LastSuccessfulTime == nil || j.Status.CompletionTime.After(st.LastSuccessfulTime.Time)) {
				t := *j.Status.CompletionTime
				st.LastSuccessfulTime = &t
			}
			continue
		}
		if !inActive[j.UID] && j.DeletionTimestamp == nil {
			active = append(active, ref(j))
			inActive[j.UID] = true
		}
	}
	sort.Slice(active, func(a, b int) bool { return active[a].Name < active[b].Name })
	st.Active = active

	// ---- History limits. ----
	plan.Delete = append(plan.Delete, overHistory(in.Jobs, api.JobComplete, cj.Spec.SuccessfulJobsHistoryLimit)...)
	plan.Delete = append(plan.Delete, overHistory(in.Jobs, api.JobFailed, cj.Spec.FailedJobsHistoryLimit)...)

	plan.Status = st
	if cj.DeletionTimestamp != nil {
		return plan
	}
	sched, loc, err := Schedule(cj)
	if err != nil {
		if cj.Spec.TimeZone != nil && strings.HasPrefix(err.Error(), "unknown time zone") {
			plan.event(api.EventTypeWarning, EventUnknownTimeZone, "invalid timeZone: %q: %s", *cj.Spec.TimeZone, err)
		} else {
			plan.event(api.EventTypeWarning, EventUnparseableSchedule, "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		}
		return plan
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return plan
	}
	cur := api.DeepCopy(cj)
	cur.Status = st
	_, recent, missed, err := mostRecentScheduleTime(cur, now, sched, true)
	if err != nil {
		plan.event(api.EventTypeWarning, EventInvalidSchedule, "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return plan
	}
	plan.RequeueAfter = nextWait(cur, now, sched)
	if recent == nil || recent.After(now) {
		return plan
	}
	if missed > tooManyMissed {
		plan.event(api.EventTypeWarning, EventTooManyMissedTimes,
			"too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew", missed)
	}
	scheduled := *recent
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		plan.event(api.EventTypeWarning, EventMissSchedule, "Missed scheduled time to start a job: %s", scheduled.Format(time.RFC1123Z))
		return plan
	}
	name := JobName(cj, scheduled)
	for _, r := range st.Active {
		if r.Name == name {
			return plan // already started
		}
	}
	if st.LastScheduleTime != nil && st.LastScheduleTime.Equal(scheduled) {
		return plan
	}
	switch cj.Spec.ConcurrencyPolicy {
	case api.ForbidConcurrent:
		if len(st.Active) > 0 {
			plan.event(api.EventTypeNormal, EventJobAlreadyActive, "Not starting job because prior execution is running and concurrency policy is Forbid")
			return plan
		}
	case api.ReplaceConcurrent:
		for _, r := range st.Active {
			if j, ok := byUID[r.UID]; ok {
				plan.Delete = append(plan.Delete, j)
			}
		}
		plan.Status.Active = nil
	}
	plan.Create = jobFromTemplate(cj, scheduled, loc)
	plan.ScheduledTime = scheduled
	return plan
}

// overHistory is the oldest finished Jobs with condition typ beyond limit
// (oldest by startTime, a Job that never started first, then by name).
func overHistory(jobs []*api.Job, typ string, limit *int32) []*api.Job {
	if limit == nil {
		return nil
	}
	var done []*api.Job
	for _, j := range jobs {
		if cond, ok := finished(j); ok && cond == typ && j.DeletionTimestamp == nil {
			done = append(done, j)
		}
	}
	if len(done) <= int(*limit) {
		return nil
	}
	sort.Slice(done, func(a, b int) bool {
		sa, sb := done[a].Status.StartTime, done[b].Status.StartTime
		switch {
		case sa == nil && sb != nil:
			return true
		case sa != nil && sb == nil:
			return false
		case sa != nil && sb != nil && !sa.Equal(sb.Time):
			return sa.Before(sb.Time)
		}
		return done[a].Name < done[b].Name
	})
	return done[:len(done)-int(*limit)]
}

// jobFromTemplate is the Job of the schedule at t: named JobName, the job
// template's labels, annotations and spec, the scheduled time (RFC 3339 in
// the CronJob's time zone) in batch.kubernetes.io/cronjob-scheduled-timestamp,
// and a controller ownerReference to the CronJob.
func jobFromTemplate(cj *api.CronJob, t time.Time, loc *time.Location) *api.Job {
	tmpl := api.DeepCopy(&api.Job{ObjectMeta: cj.Spec.JobTemplate.ObjectMeta, Spec: cj.Spec.JobTemplate.Spec})
	annotations := tmpl.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[api.CronJobScheduledTimestampAnnotation] = t.In(loc).Format(time.RFC3339)
	yes := true
	return &api.Job{
		TypeMeta: api.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: api.ObjectMeta{
			Name: JobName(cj, t), Namespace: cj.Namespace,
			Labels: tmpl.Labels, Annotations: annotations,
			OwnerReferences: []api.OwnerReference{{
				APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID,
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Spec: tmpl.Spec,
	}
}
