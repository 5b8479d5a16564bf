package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/server/servertest"
)

// TestCronJobNext: GET /ui/cronjobs/next answers the coming times of a
// schedule as the CronJob controller parses it (macros, timeZone), 400
// with the parser's message for a bad schedule or zone, and 401 without
// a session.
func TestCronJobNext(t *testing.T) {
	ts := servertest.Start(t, testOptions())
	b := newBrowserish(t, ts)
	get := func(q url.Values) (int, []time.Time, string) {
		t.Helper()
		code, body, _ := b.do(http.MethodGet, "/ui/cronjobs/next?"+q.Encode(), "", nil, nil)
		var out struct {
			Next    []string `json:"next"`
			Message string   `json:"message"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var ts []time.Time
		for _, s := range out.Next {
			v, err := time.Parse(time.RFC3339, s)
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, v)
		}
		return code, ts, out.Message
	}
	if code, _, _ := get(url.Values{"schedule": {"@hourly"}}); code != http.StatusUnauthorized {
		t.Fatalf("without a session: %d", code)
	}
	b.mustLogin(ts.Bundle().DashboardToken)

	code, next, msg := get(url.Values{"schedule": {"@hourly"}})
	if code != http.StatusOK || len(next) != 3 {
		t.Fatalf("@hourly: %d %v %s", code, next, msg)
	}
	for i, v := range next {
		if v.Minute() != 0 || v.Second() != 0 || !v.After(time.Now()) || (i > 0 && v.Sub(next[i-1]) != time.Hour) {
			t.Errorf("@hourly: %v", next)
		}
	}
	// 09:30 in Tokyo is 00:30 UTC, every day.
	code, next, msg = get(url.Values{"schedule": {"30 9 * * *"}, "timeZone": {"Asia/Tokyo"}})
	if code != http.StatusOK || len(next) != 3 || next[0].UTC().Hour() != 0 || next[0].UTC().Minute() != 30 || next[1].Sub(next[0]) != 24*time.Hour {
		t.Fatalf("Tokyo: %d %v %s", code, next, msg)
	}
	for _, q := range []url.Values{{"schedule": {"61 * * * *"}}, {"schedule": {"@hourly"}, "timeZone": {"Mars/Olympus"}}, {}} {
		if code, _, msg := get(q); code != http.StatusBadRequest || msg == "" {
			t.Errorf("%v: %d %q, want 400 with a message", q, code, msg)
		}
	}
}
