package reflector_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/internal/reflector"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

// recorder is a Handler that keeps the current set and a call log.
type recorder struct {
	mu      sync.Mutex
	objects map[string]reflector.Meta // ns/name
	calls   []string
}

func newRecorder() *recorder { return &recorder{objects: map[string]reflector.Meta{}} }

func (r *recorder) Replace(info *api.ResourceInfo, objs []reflector.Meta) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objects = map[string]reflector.Meta{}
	var names []string
	for _, o := range objs {
		r.objects[o.Namespace+"/"+o.Name] = o
		names = append(names, o.Name)
	}
	sort.Strings(names)
	r.calls = append(r.calls, "replace "+strings.Join(names, ","))
}

func (r *recorder) Upsert(info *api.ResourceInfo, o reflector.Meta) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objects[o.Namespace+"/"+o.Name] = o
	r.calls = append(r.calls, "upsert "+o.Name)
}

func (r *recorder) Delete(info *api.ResourceInfo, o reflector.Meta) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.objects, o.Namespace+"/"+o.Name)
	r.calls = append(r.calls, "delete "+o.Name)
}

func (r *recorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

type obj struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
}

func mk(name string) *obj { return &obj{ObjectMeta: api.ObjectMeta{Name: name}} }

func TestListWatchRelist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		res := fakeapi.Resources()
		nsInfo := fakeapi.Find(res, "", "namespaces")
		pods := fakeapi.Find(res, "", "pods")
		srv := fakeapi.New(res)
		for _, ns := range []string{"a", "b"} {
			if _, err := srv.Create(ctx, nsInfo, "", mk(ns)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 5 {
			if _, err := srv.Create(ctx, pods, []string{"a", "b"}[i%2], mk(fmt.Sprintf("p%d", i))); err != nil {
				t.Fatal(err)
			}
		}

		rec := newRecorder()
		r := reflector.New(srv, pods, rec, nil)
		r.PageSize = 2 // three pages
		done := make(chan struct{})
		go func() { defer close(done); r.Run(ctx) }()
		<-r.Synced()
		synctest.Wait()

		if _, err := srv.Create(ctx, pods, "a", mk("p5")); err != nil {
			t.Fatal(err)
		}
		if err := srv.Delete(ctx, pods, "b", "p1", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		// Events the reflector misses while its watch is held back, then
		// a compaction: resuming gets 410 and it must relist.
		srv.PauseWatches()
		if err := srv.Delete(ctx, pods, "a", "p0", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Create(ctx, pods, "b", mk("p6")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		srv.Expire()
		synctest.Wait()

		want := []string{
			"replace p0,p1,p2,p3,p4",
			"upsert p5", "delete p1",
			"replace p2,p3,p4,p5,p6",
		}
		if got := rec.log(); !slices.Equal(got, want) {
			t.Fatalf("handler calls:\n got %q\nwant %q", got, want)
		}

		// After the relist the watch resumes from the new list's revision.
		if err := srv.Delete(ctx, pods, "b", "p3", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := rec.log(); got[len(got)-1] != "delete p3" || len(got) != len(want)+1 {
			t.Fatalf("after relist: %q", got)
		}
		rec.mu.Lock()
		if len(rec.objects) != 4 {
			t.Fatalf("handler holds %d objects, want 4", len(rec.objects))
		}
		rec.mu.Unlock()

		cancel()
		<-done // Run returns with ctx; synctest checks nothing is left running
	})
}

// failingLW fails the first lists, to check back-off and that Synced waits.
type failingLW struct {
	*fakeapi.Server
	mu    sync.Mutex
	fails int
	calls []time.Duration
	start time.Time
}

func (f *failingLW) List(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions, into any) error {
	f.mu.Lock()
	f.calls = append(f.calls, time.Since(f.start))
	fail := f.fails > 0
	f.fails--
	f.mu.Unlock()
	if fail {
		return client.NewAPIError(500, api.StatusReasonInternalError, "boom")
	}
	return f.Server.List(ctx, info, ns, opts, into)
}

func TestListBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		res := fakeapi.Resources()
		lw := &failingLW{Server: fakeapi.New(res), fails: 3, start: time.Now()}
		rec := newRecorder()
		r := reflector.New(lw, fakeapi.Find(res, "", "nodes"), rec, nil)
		done := make(chan struct{})
		go func() { defer close(done); r.Run(ctx) }()
		synctest.Wait()
		select {
		case <-r.Synced():
			t.Fatal("Synced before a successful list")
		default:
		}
		<-r.Synced()
		want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond}
		lw.mu.Lock()
		got := slices.Clone(lw.calls)
		lw.mu.Unlock()
		if !slices.Equal(got, want) {
			t.Fatalf("list attempts at %v, want %v", got, want)
		}
		cancel()
		<-done
	})
}
