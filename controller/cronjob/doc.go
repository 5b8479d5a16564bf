// Package cronjob is Skiff's CronJob controller: it creates a CronJob's
// Jobs on its schedule, as Kubernetes' CronJob controller (v2) does.
//
// # Shape
//
// Informers on cronjobs and jobs (the caller runs them; the Job informer
// is shared with the Job controller) feed a keyed work queue. A sync reads
// the CronJob and the Jobs it controls (controller ownerReference uid),
// computes a Plan with the pure Reconcile (CronJob, Jobs, now -> Job to
// create, Jobs to delete, status, events, when to wake), and applies it.
// The clock is injected (Deps.Now): the tests move a fake clock and call
// Resync instead of sleeping. Each sync asks to be requeued just after the
// next schedule (100 ms after it).
//
// # Schedules
//
//   - The schedule is parsed with github.com/robfig/cron/v3's standard
//     parser (five fields, or @yearly/@annually, @monthly, @weekly,
//     @daily/@midnight, @hourly, @every <duration>), the parser Kubernetes
//     uses; with spec.timeZone it is parsed as "TZ=<zone> <schedule>", so
//     it runs in that zone. Without one, the server's local zone is used
//     (Kubernetes: the controller manager's). An unknown zone records
//     UnknownTimeZone and an unparseable schedule UnparseableSchedule, and
//     the CronJob waits for a change.
//   - The schedule due is the most recent one at or before now, after
//     status.lastScheduleTime (or the creation time). Schedules missed
//     while the server was down are not all run: only the most recent
//     starts. Their number is estimated from the interval between two
//     schedules, as Kubernetes does; more than 100 records
//     TooManyMissedTimes. With startingDeadlineSeconds only schedules
//     within the deadline count (the earliest time looked at is moved up to
//     now - deadline), and one found later than its deadline records
//     MissSchedule and is skipped.
//   - The Job of a schedule at t is <cronjob>-<t.Unix()/60> (so the same
//     schedule never makes two Jobs: a create that meets an existing Job
//     controlled by this CronJob counts as done), with the job template's
//     labels, annotations and spec, the annotation
//     batch.kubernetes.io/cronjob-scheduled-timestamp (t in RFC 3339 in
//     the CronJob's zone) and a controller ownerReference with
//     blockOwnerDeletion, so deleting the CronJob deletes its Jobs.
//   - concurrencyPolicy: Allow starts it regardless; Forbid skips the
//     schedule while a Job is active (JobAlreadyActive; the schedule is
//     not retried later); Replace deletes the active Jobs (Background
//     propagation) and starts the new one.
//   - suspend: nothing is scheduled (the Jobs already running go on); a
//     resumed CronJob starts the most recent missed schedule, within
//     startingDeadlineSeconds if set.
//
// # Status and history
//
//   - status.active lists the CronJob's unfinished Jobs: finished ones
//     leave it (SawCompletedJob), deleted ones are dropped, and a running
//     Job of the CronJob missing from it is added (a status write lost in
//     a crash). lastScheduleTime is the scheduled time of the last Job
//     started, lastSuccessfulTime the latest completionTime of a Complete
//     Job.
//   - successfulJobsHistoryLimit and failedJobsHistoryLimit keep that many
//     Complete and Failed Jobs; older ones (by startTime, never-started
//     first) are deleted with Background propagation.
//   - The status is written with a PUT of the status subresource guarded
//     by the resourceVersion, only when it changed.
//
// # Events
//
// SuccessfulCreate "Created job <name>", SuccessfulDelete "Deleted job
// <name>", FailedCreate, SawCompletedJob, MissSchedule, TooManyMissedTimes,
// JobAlreadyActive, UnknownTimeZone, UnparseableSchedule, as Kubernetes.
package cronjob
