package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/store"
)

// failingStore fails the commit of every Update while fail is set, after
// running the closure (like a failed fsync).
type failingStore struct {
	store.Interface
	fail atomic.Bool
}

func (f *failingStore) Update(ctx context.Context, fn func(store.Txn) error) (int64, error) {
	return f.Interface.Update(ctx, func(tx store.Txn) error {
		if err := fn(tx); err != nil {
			return err
		}
		if f.fail.Load() {
			return errors.New("disk on fire")
		}
		return nil
	})
}

func TestTxnHook(t *testing.T) {
	hook := &recordingHook{}
	var srv *Server
	hook.put = func(tx store.Txn, a Admission) error {
		m := a.Obj.GetObjectMeta()
		switch a.Op {
		case OpCreate:
			g := &gizmo{}
			g.Name, g.Namespace = "shadow-"+m.Name, m.Namespace
			return srv.PutObject(tx, gizmoInfo, g)
		case OpDelete:
			return srv.DeleteObject(tx, gizmoInfo, m.Namespace, "shadow-"+m.Name)
		}
		return nil
	}
	var fs *failingStore
	e := newEnv(t, func(c *Config) {
		fs = &failingStore{Interface: c.Store}
		c.Store = fs
		c.Hooks = map[string]TxnHook{"widgets.example.com": hook}
	})
	srv = e.s

	w := e.createWidget("w", nil, map[string]any{"size": 1})
	var shadow gizmo
	e.must(200, "GET", "/apis/example.com/v1/namespaces/default/gizmos/shadow-w", nil).into(t, &shadow)
	if shadow.UID == "" || shadow.ResourceVersion != w.ResourceVersion || shadow.Generation != 1 || shadow.Kind != "Gizmo" {
		t.Errorf("object written by the hook: %+v (widget rv %s)", shadow, w.ResourceVersion)
	}
	e.must(200, "PATCH", widgetsPath+"/w", `{"spec":{"size":2}}`, "Content-Type: application/merge-patch+json")
	e.must(200, "PATCH", widgetsPath+"/w/status", `{"status":{"phase":"Up"}}`, "Content-Type: application/merge-patch+json")
	e.must(200, "DELETE", widgetsPath+"/w?propagationPolicy=Foreground", nil)
	e.must(200, "PATCH", widgetsPath+"/w", `{"metadata":{"finalizers":null}}`, "Content-Type: application/merge-patch+json")
	e.must(404, "GET", widgetsPath+"/w", nil)
	e.must(404, "GET", "/apis/example.com/v1/namespaces/default/gizmos/shadow-w", nil)

	admits, commits, aborts := hook.snapshot()
	want := []admitted{{OpCreate, "w", ""}, {OpUpdate, "w", ""}, {OpUpdate, "w", "status"}, {OpUpdate, "w", ""}, {OpDelete, "w", ""}}
	if fmt.Sprint(admits) != fmt.Sprint(want) {
		t.Fatalf("admissions %v, want %v", admits, want)
	}
	if len(commits) != 5 || len(aborts) != 0 {
		t.Fatalf("commits %v aborts %v", commits, aborts)
	}

	// A failed commit runs OnAbort and leaves nothing behind.
	fs.fail.Store(true)
	e.must(500, "POST", widgetsPath, `{"metadata":{"name":"doomed"}}`)
	fs.fail.Store(false)
	e.must(404, "GET", widgetsPath+"/doomed", nil)
	e.must(404, "GET", "/apis/example.com/v1/namespaces/default/gizmos/shadow-doomed", nil)
	_, commits, aborts = hook.snapshot()
	if len(commits) != 5 || fmt.Sprint(aborts) != "[Create doomed]" {
		t.Fatalf("after failed commit: commits %v aborts %v", commits, aborts)
	}

	// A dry run aborts too.
	e.must(201, "POST", widgetsPath+"?dryRun=All", `{"metadata":{"name":"dry"}}`)
	_, _, aborts = hook.snapshot()
	if fmt.Sprint(aborts) != "[Create doomed Create dry]" {
		t.Fatalf("after dry run: aborts %v", aborts)
	}

	// A hook's StatusError passes through unchanged.
	hook.failName = "taken"
	hook.failErr = NewInvalid("Widget.example.com", "taken", field.ErrorList{
		field.Invalid(field.NewPath("spec", "color"), "x", "provided IP is already allocated")})
	r := e.must(422, "POST", widgetsPath, `{"metadata":{"name":"taken"}}`)
	if st := r.status(t); !strings.Contains(st.Message, "provided IP is already allocated") {
		t.Errorf("message %q", st.Message)
	}
	// Any other error is a 500.
	hook.failErr = errors.New("allocator broke")
	r = e.must(500, "POST", widgetsPath, `{"metadata":{"name":"taken"}}`)
	if st := r.status(t); !strings.Contains(st.Message, "allocator broke") || st.Reason != "InternalError" {
		t.Errorf("status %+v", st)
	}
	e.must(404, "GET", widgetsPath+"/taken", nil)
}

func TestHookForUnknownResource(t *testing.T) {
	_, err := New(Config{
		Store: openTestStore(t, testBoltOptions()), Resources: testResources,
		Authenticator: StaticTokens{}, Hooks: map[string]TxnHook{"sprockets": &recordingHook{}},
	})
	if err == nil {
		t.Fatal("New accepted a hook for an unserved resource")
	}
}

type denyDeletes struct{}

func (denyDeletes) Authorize(ctx context.Context, u User, a Attributes) error {
	if a.Verb == "delete" {
		return fmt.Errorf("user %q cannot delete %s", u.Name, a.Resource)
	}
	if a.Subresource == "status" && a.Verb == "update" {
		return NewForbidden("widgets.example.com", a.Name, errors.New("no status for you"))
	}
	return nil
}

func TestAuthorizer(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Authorizer = denyDeletes{} })
	e.createWidget("w", nil, nil)
	r := e.must(403, "DELETE", widgetsPath+"/w", nil)
	if st := r.status(t); !strings.Contains(st.Message, `user "admin" cannot delete widgets`) || st.Reason != "Forbidden" {
		t.Errorf("status %+v", st)
	}
	r = e.must(403, "PUT", widgetsPath+"/w/status", `{"metadata":{"name":"w"}}`)
	if st := r.status(t); !strings.Contains(st.Message, "no status for you") {
		t.Errorf("status %+v", st)
	}
	e.must(200, "GET", widgetsPath+"/w", nil)
}

type panicHook struct{}

func (panicHook) Admit(ctx context.Context, tx store.Txn, a Admission) (Outcome, error) {
	panic("hook exploded")
}

func TestRecoverer(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Hooks = map[string]TxnHook{"widgets.example.com": panicHook{}} })
	r := e.must(500, "POST", widgetsPath, `{"metadata":{"name":"w"}}`)
	if st := r.status(t); st.Reason != "InternalError" || !strings.Contains(st.Message, "hook exploded") {
		t.Errorf("status %+v", st)
	}
	// The server still works.
	e.must(200, "GET", widgetsPath, nil)
}

func TestPodLogs(t *testing.T) {
	e := newEnv(t)
	e.must(201, "POST", podsPath, `{"metadata":{"name":"p"}}`)
	r := e.must(404, "GET", podsPath+"/p/log", nil)
	if st := r.status(t); !strings.Contains(st.Message, "no log source") {
		t.Errorf("message %q", st.Message)
	}

	var gotQuery url.Values
	e2 := newEnv(t, func(c *Config) {
		c.PodLogs = func(ctx context.Context, ns, name string, q url.Values) (io.ReadCloser, error) {
			gotQuery = q
			return io.NopCloser(strings.NewReader("line 1\nline 2\n")), nil
		}
	})
	e2.must(201, "POST", podsPath, `{"metadata":{"name":"p"}}`)
	r = e2.must(200, "GET", podsPath+"/p/log?container=c&tailLines=2", nil)
	if string(r.body) != "line 1\nline 2\n" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Errorf("log body %q type %q", r.body, r.header.Get("Content-Type"))
	}
	if gotQuery.Get("container") != "c" || gotQuery.Get("tailLines") != "2" {
		t.Errorf("query %v", gotQuery)
	}
	e2.must(404, "GET", podsPath+"/missing/log", nil)
}

var _ = http.StatusOK
var _ api.Object = (*widget)(nil)
