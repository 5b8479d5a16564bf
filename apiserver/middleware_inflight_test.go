package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
)

// TestInflightMiddleware: each pool admits its cap and answers the next
// request 429 with Retry-After: 1 at once; the pools are separate; watches
// and logs are not counted; a system:masters user is never refused.
func TestInflightMiddleware(t *testing.T) {
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "g"}, []string{"request_kind"})
	l := newInflight(2, 1, gauge)
	release := make(chan struct{})
	var entered sync.WaitGroup
	h := l.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hold") != "" {
			entered.Done()
			<-release
		}
	}))
	serve := func(method, target string, groups ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, nil)
		req = req.WithContext(WithUser(req.Context(), User{Name: "u", Groups: groups}))
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, req)
		return rr
	}
	var done sync.WaitGroup
	hold := func(method, target string) {
		entered.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			if rr := serve(method, target); rr.Code != http.StatusOK {
				t.Errorf("held %s %s: %d", method, target, rr.Code)
			}
		}()
		entered.Wait()
	}
	hold(http.MethodGet, "/api/v1/pods?hold=1")
	hold(http.MethodGet, "/api/v1/pods?hold=1")
	hold(http.MethodPost, "/api/v1/namespaces/a/pods?hold=1")
	if got := testGauge(t, gauge, "readOnly"); got != 2 {
		t.Errorf("readOnly gauge %v, want 2", got)
	}

	for _, c := range []struct {
		method, target string
		groups         []string
		want           int
	}{
		{http.MethodGet, "/api/v1/pods", nil, http.StatusTooManyRequests},
		{http.MethodHead, "/api/v1/pods", nil, http.StatusTooManyRequests},
		{http.MethodPut, "/api/v1/namespaces/a/pods/p", nil, http.StatusTooManyRequests},
		{http.MethodDelete, "/api/v1/namespaces/a/pods/p", nil, http.StatusTooManyRequests},
		{http.MethodGet, "/api/v1/pods?watch=true", nil, http.StatusOK},
		{http.MethodGet, "/api/v1/pods?watch=1", nil, http.StatusOK},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p/log?follow=true", nil, http.StatusOK},
		{http.MethodGet, "/api/v1/namespaces/a/pods/p/exec?command=sh", nil, http.StatusOK},
		{http.MethodPost, "/api/v1/namespaces/a/pods/p/attach", nil, http.StatusOK},
		{http.MethodPost, "/api/v1/namespaces/a/pods/p/portforward", nil, http.StatusOK},
		{http.MethodGet, "/api/v1/pods", []string{"x", groupMasters}, http.StatusOK},
		{http.MethodPost, "/api/v1/namespaces/a/pods", []string{groupMasters}, http.StatusOK},
	} {
		start := time.Now()
		rr := serve(c.method, c.target, c.groups...)
		if rr.Code != c.want {
			t.Errorf("%s %s %v: %d, want %d", c.method, c.target, c.groups, rr.Code, c.want)
			continue
		}
		if c.want != http.StatusTooManyRequests {
			continue
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s %s: the 429 took %v", c.method, c.target, d)
		}
		if ra := rr.Header().Get("Retry-After"); ra != "1" {
			t.Errorf("%s %s: Retry-After %q", c.method, c.target, ra)
		}
		var st api.Status
		if err := json.Unmarshal(rr.Body.Bytes(), &st); err != nil || st.Kind != "Status" ||
			st.Reason != api.StatusReasonTooManyRequests || st.Code != 429 || st.Details == nil || st.Details.RetryAfterSeconds != 1 {
			t.Errorf("%s %s: body %s (%v)", c.method, c.target, rr.Body, err)
		}
	}
	close(release)
	done.Wait()
	if rr := serve(http.MethodPost, "/api/v1/namespaces/a/pods"); rr.Code != http.StatusOK {
		t.Errorf("after the release a write got %d", rr.Code)
	}
	if got := testGauge(t, gauge, "readOnly") + testGauge(t, gauge, "mutating"); got != 0 {
		t.Errorf("gauges %v after every request ended", got)
	}
	// No limit below 1.
	open := newInflight(0, -1, gauge).middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	rr := httptest.NewRecorder()
	open.ServeHTTP(rr, httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/a/pods", nil))
	if rr.Code != http.StatusOK {
		t.Errorf("without limits: %d", rr.Code)
	}
}

// testGauge reads one kind of the in-flight gauge through a registry.
func testGauge(t *testing.T, g *prometheus.GaugeVec, kind string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "request_kind" && lp.GetValue() == kind {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}
