package web

import (
	"net/http"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/controller/cronjob"
)

// nextRuns is how many coming schedule times GET /ui/cronjobs/next
// answers: the CronJobs page shows the first, its tooltip the rest.
const nextRuns = 3

// serveCronJobNext answers the next times a CronJob schedule fires:
// GET /ui/cronjobs/next?schedule=<5 fields or a macro>[&timeZone=<zone>]
// → {"next": [RFC 3339 times]}, parsed exactly as the CronJob controller
// parses it (cronjob.Schedule: the same parser, the same time zone rule,
// the server's local zone when timeZone is absent). A schedule the
// controller refuses is a 400 with its message. It reads nothing from the
// API: the page sends the schedule it shows, so it needs no permission
// beyond a session.
func (d *Dashboard) serveCronJobNext(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cj := &api.CronJob{Spec: api.CronJobSpec{Schedule: q.Get("schedule")}}
	if tz := q.Get("timeZone"); tz != "" {
		cj.Spec.TimeZone = &tz
	}
	if cj.Spec.Schedule == "" {
		writeJSONError(w, http.StatusBadRequest, "schedule is required")
		return
	}
	sched, loc, err := cronjob.Schedule(cj)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, err.Error())
		return
	}
	next := make([]string, 0, nextRuns)
	for t := d.now().In(loc); len(next) < nextRuns; {
		t = sched.Next(t)
		if t.IsZero() { // a schedule that never fires (Feb 30)
			break
		}
		next = append(next, t.UTC().Format(time.RFC3339))
	}
	writeJSON(w, http.StatusOK, map[string][]string{"next": next})
}
