package printers

import (
	"fmt"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- Jobs and CronJobs ----

func jobColumns() []Column {
	return []Column{
		nameColumn,
		col("Status", "Status of the job."),
		col("Completions", "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs."),
		col("Duration", "Time required to complete the job."),
		ageColumn,
		wide(col("Containers", descContainers)),
		wide(col("Images", descImages)),
		wide(col("Selector", "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels#label-selectors")),
	}
}

func jobCondition(j *api.Job, typ string) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}

// JobStatus is a Job's STATUS cell, as kubectl picks it: Complete, Failed,
// Terminating, Suspended, FailureTarget, SuccessCriteriaMet, else Running.
func JobStatus(j *api.Job) string {
	switch {
	case jobCondition(j, api.JobComplete):
		return "Complete"
	case jobCondition(j, api.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case jobCondition(j, api.JobSuspended):
		return "Suspended"
	case jobCondition(j, api.JobFailureTarget):
		return "FailureTarget"
	case jobCondition(j, api.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

// JobCells is a Job's row: NAME STATUS COMPLETIONS DURATION AGE, then
// (wide) CONTAINERS IMAGES SELECTOR. COMPLETIONS is succeeded/completions,
// or for a Job without completions succeeded/1 (and "of <parallelism>"
// when more than one pod runs); DURATION runs from startTime to
// completionTime (or now), empty before the Job starts.
func JobCells(j *api.Job, now time.Time) []any {
	var completions string
	switch {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case j.Spec.Parallelism != nil && *j.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}
	var duration string
	switch {
	case j.Status.StartTime == nil:
	case j.Status.CompletionTime == nil:
		duration = HumanDuration(now.Sub(j.Status.StartTime.Time))
	default:
		duration = HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
	}
	names, images := ContainerCells(j.Spec.Template.Spec.Containers)
	return []any{j.Name, JobStatus(j), completions, duration, Age(j.CreationTimestamp.Time, now),
		names, images, api.SelectorString(j.Spec.Selector)}
}

func cronJobColumns() []Column {
	return []Column{
		nameColumn,
		col("Schedule", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
		col("Timezone", "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"),
		{Name: "Suspend", Type: "boolean", Description: "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions. Defaults to false."},
		{Name: "Active", Type: "integer", Description: "A list of pointers to currently running jobs."},
		col("Last Schedule", "Information when was the last time the job was successfully scheduled."),
		ageColumn,
		wide(col("Containers", descContainers)),
		wide(col("Images", descImages)),
		wide(col("Selector", "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels#label-selectors")),
	}
}

// CronJobCells is a CronJob's row: NAME SCHEDULE TIMEZONE SUSPEND ACTIVE
// LAST SCHEDULE AGE, then (wide) CONTAINERS IMAGES SELECTOR.
func CronJobCells(c *api.CronJob, now time.Time) []any {
	last := "<none>"
	if c.Status.LastScheduleTime != nil {
		last = Age(c.Status.LastScheduleTime.Time, now)
	}
	tz := "<none>"
	if c.Spec.TimeZone != nil {
		tz = *c.Spec.TimeZone
	}
	suspend := "<unset>"
	if c.Spec.Suspend != nil {
		suspend = "False"
		if *c.Spec.Suspend {
			suspend = "True"
		}
	}
	t := &c.Spec.JobTemplate.Spec
	names, images := ContainerCells(t.Template.Spec.Containers)
	return []any{c.Name, c.Spec.Schedule, tz, suspend, int64(len(c.Status.Active)), last, Age(c.CreationTimestamp.Time, now),
		names, images, api.SelectorString(t.Selector)}
}
