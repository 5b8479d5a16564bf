package server_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server/servertest"
)

// seen is one decoded watch event.
type seen struct {
	typ  string
	name string
	rv   int64
	svc  api.Service
}

// nextEvent waits for the next non-bookmark event of w.
func nextEvent(t *testing.T, w *client.Watcher, d time.Duration) seen {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed: %v", w.Err())
			}
			if ev.Type == client.EventBookmark {
				continue
			}
			var s seen
			s.typ = ev.Type
			if ev.Type == client.EventError {
				return s
			}
			if err := json.Unmarshal(ev.Object, &s.svc); err != nil {
				t.Fatalf("decode %s event: %v", ev.Type, err)
			}
			s.name = s.svc.Name
			s.rv, _ = strconv.ParseInt(s.svc.ResourceVersion, 10, 64)
			return s
		case <-timer.C:
			t.Fatalf("no watch event after %v", d)
		}
	}
}

func expectEvents(t *testing.T, w *client.Watcher, want ...string) []seen {
	t.Helper()
	var got []seen
	var lastRV int64
	for _, wnt := range want {
		typ, name, _ := strings.Cut(wnt, " ")
		ev := nextEvent(t, w, 10*time.Second)
		if ev.typ != typ || ev.name != name {
			t.Fatalf("event %q %q, want %q", ev.typ, ev.name, wnt)
		}
		if ev.rv <= lastRV {
			t.Fatalf("event %s at revision %d after %d: not increasing", wnt, ev.rv, lastRV)
		}
		lastRV = ev.rv
		got = append(got, ev)
	}
	return got
}

func TestWatchServices(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 60*time.Second)

	if err := c.Create(ctx, resServices, "default", service("before", api.ServiceTypeClusterIP, 80)); err != nil {
		t.Fatal(err)
	}
	var l api.ServiceList
	if err := c.List(ctx, resServices, "default", client.ListOptions{}, &l); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, resServices, "default", client.ListOptions{ResourceVersion: l.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	s := service("watched", api.ServiceTypeNodePort, 80)
	if err := c.Create(ctx, resServices, "default", s); err != nil {
		t.Fatal(err)
	}
	s.Labels = map[string]string{"v": "2"}
	if err := c.Update(ctx, resServices, "default", s); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, resServices, "default", "watched", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	evs := expectEvents(t, w, "ADDED watched", "MODIFIED watched", "DELETED watched")
	if evs[0].svc.Spec.ClusterIP == "" || evs[0].svc.Spec.Ports[0].NodePort == 0 {
		t.Errorf("ADDED object lacks its allocations: %+v", evs[0].svc.Spec)
	}
	if evs[1].svc.Labels["v"] != "2" {
		t.Errorf("MODIFIED object lacks the update: %v", evs[1].svc.Labels)
	}

	// A label-selected watch sees only matching Services.
	sel, err := c.Watch(ctx, resServices, "", client.ListOptions{ResourceVersion: evs[2].svc.ResourceVersion, LabelSelector: "team in (a)"})
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Stop()
	for _, n := range []string{"team-b", "team-a"} {
		x := service(n, api.ServiceTypeClusterIP, 80)
		x.Labels = map[string]string{"team": strings.TrimPrefix(n, "team-")}
		if err := c.Create(ctx, resServices, "default", x); err != nil {
			t.Fatal(err)
		}
	}
	expectEvents(t, sel, "ADDED team-a")

	// Resume after a restart from a revision seen before it: the history
	// is in bbolt.
	resumeRV := evs[0].svc.ResourceVersion
	w.Stop()
	sel.Stop()
	ts.Restart()
	w2, err := ts.Client().Watch(ctx, resServices, "default", client.ListOptions{ResourceVersion: resumeRV})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	after := service("after-restart", api.ServiceTypeClusterIP, 80)
	if err := ts.Client().Create(ctx, resServices, "default", after); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, w2, "MODIFIED watched", "DELETED watched", "ADDED team-b", "ADDED team-a", "ADDED after-restart")
}

func TestWatchCompactedRevisionGets410(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{Config: func(cfg *config.Server) { cfg.HistorySize = 20 }})
	c := ts.Client()
	ctx := ctxT(t, 60*time.Second)

	first := lease("old")
	if err := c.Create(ctx, resLeases, "default", first); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := c.Create(ctx, resLeases, "default", lease(fmt.Sprintf("l-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, res := range []string{"services", "leases"} {
		t.Run(res, func(t *testing.T) {
			info := resServices
			if res == "leases" {
				info = resLeases
			}
			w, err := c.Watch(ctx, info, "default", client.ListOptions{ResourceVersion: first.ResourceVersion})
			if err != nil {
				if client.IsGone(err) {
					t.Fatalf("watch from a compacted revision answered %v; want an ERROR event", err)
				}
				t.Fatal(err)
			}
			defer w.Stop()
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("watch closed without an event: %v", w.Err())
				}
				if ev.Type != client.EventError {
					t.Fatalf("got %s, want ERROR", ev.Type)
				}
				var st api.Status
				if err := json.Unmarshal(ev.Object, &st); err != nil {
					t.Fatal(err)
				}
				if st.Kind != "Status" || st.Code != 410 || st.Reason != api.StatusReasonGone || !client.IsGone(ev.Err()) {
					t.Fatalf("ERROR event %s, want a 410 Gone Status", ev.Object)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no event")
			}
			select {
			case _, ok := <-w.ResultChan():
				if ok {
					t.Fatal("watch went on after the ERROR event")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("watch not closed after the ERROR event")
			}
		})
	}
	// A recent revision still works.
	var l api.LeaseList
	if err := c.List(ctx, resLeases, "default", client.ListOptions{}, &l); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, resLeases, "default", client.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.Delete(ctx, resLeases, "default", "old", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, w, 10*time.Second)
	if ev.typ != client.EventDeleted || ev.name != "old" {
		t.Fatalf("got %s %s, want DELETED old", ev.typ, ev.name)
	}
}
