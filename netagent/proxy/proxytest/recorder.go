package proxytest

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// Call is one Backend.Sync seen by a Recorder, with a copy of the State.
type Call struct {
	Full      bool
	Changed   []proxy.ServicePortName
	Services  map[proxy.ServicePortName]*proxy.ServicePort
	Endpoints map[proxy.ServicePortName][]proxy.Endpoint
	Err       error
}

// Recorder is a proxy.Backend that records every Sync and passes it on to
// Next (when set). Fail, when set, is asked before each sync and its error
// is returned instead of syncing.
type Recorder struct {
	Next proxy.Backend
	Fail func(call int) error

	mu     sync.Mutex
	calls  []Call
	signal chan struct{}
}

var _ proxy.Backend = (*Recorder)(nil)

// Name is Next's name, or "recorder".
func (r *Recorder) Name() string {
	if r.Next != nil {
		return r.Next.Name()
	}
	return "recorder"
}

// Sync records the call and delegates it.
func (r *Recorder) Sync(ctx context.Context, st *proxy.State, changed []proxy.ServicePortName) error {
	c := Call{
		Full:      changed == nil,
		Changed:   slices.Clone(changed),
		Services:  maps.Clone(st.Services),
		Endpoints: maps.Clone(st.Endpoints),
	}
	r.mu.Lock()
	n := len(r.calls)
	r.mu.Unlock()
	if r.Fail != nil {
		c.Err = r.Fail(n)
	}
	if c.Err == nil && r.Next != nil {
		c.Err = r.Next.Sync(ctx, st, changed)
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	if r.signal != nil {
		close(r.signal)
		r.signal = nil
	}
	r.mu.Unlock()
	return c.Err
}

// Cleanup delegates.
func (r *Recorder) Cleanup(ctx context.Context) error {
	if r.Next != nil {
		return r.Next.Cleanup(ctx)
	}
	return nil
}

// Calls returns the calls so far.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// WaitFor waits (up to 10 s) for a successful call after the first skip
// calls for which ok returns true, and returns it.
func (r *Recorder) WaitFor(t testing.TB, skip int, ok func(Call) bool) Call {
	t.Helper()
	c, _ := r.WaitForIndex(t, skip, ok)
	return c
}

// WaitForIndex is WaitFor that also returns the call's index.
func (r *Recorder) WaitForIndex(t testing.TB, skip int, ok func(Call) bool) (Call, int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for i := skip; ; {
		r.mu.Lock()
		for ; i < len(r.calls); i++ {
			if c := r.calls[i]; c.Err == nil && ok(c) {
				r.mu.Unlock()
				return c, i
			}
		}
		if r.signal == nil {
			r.signal = make(chan struct{})
		}
		sig := r.signal
		r.mu.Unlock()
		select {
		case <-sig:
		case <-deadline:
			t.Fatalf("proxytest: no matching sync within 10s (%d calls)", i)
			return Call{}, -1
		}
	}
}
