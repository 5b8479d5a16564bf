package logtail

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// file is a log file that grows while it is read.
type file struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (f *file) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buf.Read(p)
}

func (f *file) append(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf.WriteString(s)
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("reader gone") }

const interval = 100 * time.Millisecond

func TestCopy(t *testing.T) {
	errState := errors.New("state unreadable")
	// step is one look at the container: what it wrote since the last
	// look, and the phase it reports.
	type step struct {
		wrote string
		phase Phase
		err   error
	}
	for _, tc := range []struct {
		name   string
		follow bool
		steps  []step
		// late is written half an interval after the last look.
		late    string
		want    string
		wantErr error
	}{
		{name: "no follow copies what is there", follow: false, steps: []step{{wrote: "b", phase: Writing}}, want: "a"},
		{name: "follow until done", follow: true,
			steps: []step{{wrote: "b", phase: Writing}, {wrote: "c", phase: Writing}, {wrote: "d", phase: Done}}, late: "never", want: "abcd"},
		{name: "draining waits one more interval", follow: true,
			steps: []step{{wrote: "b", phase: Writing}, {wrote: "c", phase: Draining}}, late: "late", want: "abclate"},
		{name: "done copies what is there without waiting", follow: true,
			steps: []step{{wrote: "b", phase: Done}}, late: "late", want: "ab"},
		{name: "state error", follow: true,
			steps: []step{{wrote: "b", phase: Writing}, {err: errState}}, want: "ab", wantErr: errState},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &file{}
				f.append("a")
				looks := 0
				phase := func(context.Context) (Phase, error) {
					s := tc.steps[looks]
					looks++
					f.append(s.wrote)
					if looks == len(tc.steps) && tc.late != "" {
						go func() {
							time.Sleep(interval / 2)
							f.append(tc.late)
						}()
					}
					return s.phase, s.err
				}
				var out bytes.Buffer
				err := Copy(t.Context(), &out, f, Options{Follow: tc.follow, Interval: interval, Phase: phase})
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Copy = %v, want %v", err, tc.wantErr)
				}
				if out.String() != tc.want {
					t.Errorf("copied %q, want %q", out.String(), tc.want)
				}
				time.Sleep(interval) // the late writer ends inside the bubble
			})
		})
	}
}

func TestCopyStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := &file{}
		f.append("a")
		phase := func(context.Context) (Phase, error) { return Writing, nil }
		done := make(chan error, 1)
		var out bytes.Buffer
		go func() { done <- Copy(ctx, &out, f, Options{Follow: true, Interval: interval, Phase: phase}) }()
		time.Sleep(10 * interval)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Copy after cancel = %v, want nil", err)
		}
		if out.String() != "a" {
			t.Errorf("copied %q, want %q", out.String(), "a")
		}
	})
}

func TestCopyWriterError(t *testing.T) {
	err := Copy(t.Context(), failWriter{}, strings.NewReader("a"), Options{})
	if err == nil || !strings.Contains(err.Error(), "reader gone") {
		t.Fatalf("Copy to a failing writer = %v, want its error", err)
	}
}
