package cronjob

import (
	"fmt"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// BenchmarkSchedule1000PerMinute reconciles 1,000 every-minute CronJobs
// once per simulated minute, each woken at a different lateness within the
// minute (as a busy controller would be), and fails if any Job is not
// scheduled for exactly that minute: the schedule is computed from the
// last scheduled time, never from when the controller woke, so lateness
// does not accumulate into drift. One op is one minute of all 1,000.
func BenchmarkSchedule1000PerMinute(b *testing.B) {
	const n = 1000
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	cjs := make([]*api.CronJob, n)
	for i := range cjs {
		cjs[i] = newCronJob("* * * * *", func(c *api.CronJob) {
			c.Name = fmt.Sprintf("cj-%04d", i)
			c.CreationTimestamp = api.Time{Time: base.Add(-time.Minute)}
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for m := range b.N {
		minute := base.Add(time.Duration(m) * time.Minute)
		for i, cj := range cjs {
			now := minute.Add(time.Duration(i%50) * time.Second) // up to 49 s late
			p := Reconcile(Input{CronJob: cj, Now: now})
			if p.Create == nil || !p.ScheduledTime.Equal(minute) || p.Create.Name != JobName(cj, minute) {
				b.Fatalf("minute %d, %s: scheduled %v, want %v (drift)", m, cj.Name, p.ScheduledTime, minute)
			}
			if next := now.Add(p.RequeueAfter); next.Before(minute.Add(time.Minute)) || next.After(minute.Add(time.Minute+time.Second)) {
				b.Fatalf("minute %d, %s: next wake %v, want just after %v", m, cj.Name, next, minute.Add(time.Minute))
			}
			cj.Status.LastScheduleTime = &api.Time{Time: p.ScheduledTime}
		}
	}
	b.ReportMetric(n, "cronjobs/op")
}
