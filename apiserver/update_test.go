package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/store"
)

// closureStore tells whether the caller is inside one of its Update
// closures (the store's commit loop).
type closureStore struct {
	store.Interface
	inside atomic.Int32
}

func (s *closureStore) Update(ctx context.Context, fn func(store.Txn) error) (int64, error) {
	return s.Interface.Update(ctx, func(tx store.Txn) error {
		s.inside.Add(1)
		defer s.inside.Add(-1)
		return fn(tx)
	})
}

// updateEnv is a test server whose patcher (a merge patcher) records
// whether it runs inside a store closure and calls onPatch (outside one)
// before each patch it applies.
type updateEnv struct {
	*testEnv
	cs      *closureStore
	calls   atomic.Int32
	insides atomic.Int32 // calls made inside a store closure
	onPatch func(call int32)
}

func newUpdateEnv(t *testing.T, opts ...envOption) *updateEnv {
	u := &updateEnv{}
	opts = append(opts, func(c *Config) {
		u.cs = &closureStore{Interface: c.Store}
		c.Store = u.cs
		c.Patcher = func(ctx context.Context, ct string, original, patch []byte) ([]byte, error) {
			n := u.calls.Add(1)
			if u.cs.inside.Load() > 0 {
				u.insides.Add(1)
			} else if u.onPatch != nil {
				u.onPatch(n)
			}
			return defaultPatcher(ctx, mediaMergePatch, original, patch)
		}
	})
	u.testEnv = newEnv(t, opts...)
	return u
}

// bump changes the labels of widget name behind the API server's back,
// as a concurrent writer would.
func (e *testEnv) bump(name, label string) error {
	key := KeyFor(widgetInfo, "default", name)
	_, err := e.store.Update(context.Background(), func(tx store.Txn) error {
		kv, ok, err := tx.Get(key)
		if err != nil || !ok {
			return fmt.Errorf("bump %s: %v (found %v)", name, err, ok)
		}
		var w widget
		if err := json.Unmarshal(kv.Value, &w); err != nil {
			return err
		}
		if w.Labels == nil {
			w.Labels = map[string]string{}
		}
		w.Labels[label] = "yes"
		w.ResourceVersion = strconv.FormatInt(tx.Revision(), 10)
		b, err := json.Marshal(&w)
		if err != nil {
			return err
		}
		return tx.Put(key, b)
	})
	return err
}

// TestPatchComputedOutsideCommitLoop: the patch is applied (and the result
// decoded and validated) before the transaction, never in the store's
// commit loop where it would delay every other write.
func TestPatchComputedOutsideCommitLoop(t *testing.T) {
	e := newUpdateEnv(t)
	e.createWidget("p", nil, map[string]any{"size": 1})
	for _, ct := range []string{mediaMergePatch, mediaStrategicPatch, mediaJSONPatch} {
		body := `{"spec":{"size":2}}`
		if ct == mediaJSONPatch {
			body = `{"spec":{"size":3}}` // the test patcher merges whatever the type
		}
		e.must(200, "PATCH", widgetsPath+"/p", body, "Content-Type: "+ct)
		e.must(200, "PATCH", widgetsPath+"/p/status", `{"status":{"phase":"`+strings.ReplaceAll(ct, "/", "-")+`"}}`, "Content-Type: "+ct)
	}
	e.must(200, "PATCH", widgetsPath+"/p?dryRun=All", `{"spec":{"size":9}}`, "Content-Type: "+mediaMergePatch)
	if n := e.insides.Load(); n != 0 {
		t.Errorf("%d of %d patches ran inside a store closure", n, e.calls.Load())
	}
	var w widget
	e.must(200, "GET", widgetsPath+"/p", nil).into(t, &w)
	if w.Spec.Size != 3 {
		t.Errorf("size %d after the dry run, want 3", w.Spec.Size)
	}
}

// TestPatchRetriesOnConcurrentWrite: a write between the patch's read and
// its commit makes the patch start again from the new object. Without a
// resourceVersion it then succeeds with both changes; with the one it
// read, it gets 409.
func TestPatchRetriesOnConcurrentWrite(t *testing.T) {
	e := newUpdateEnv(t)
	w0 := e.createWidget("p", nil, map[string]any{"size": 1})
	var bumpErr error
	e.onPatch = func(call int32) {
		if call == 1 {
			bumpErr = e.bump("p", "first")
		}
	}
	var w widget
	e.must(200, "PATCH", widgetsPath+"/p", `{"spec":{"size":2}}`, "Content-Type: "+mediaMergePatch).into(t, &w)
	if bumpErr != nil {
		t.Fatal(bumpErr)
	}
	if n := e.calls.Load(); n != 2 {
		t.Errorf("patcher called %d times, want 2 (one stale read)", n)
	}
	if w.Spec.Size != 2 || w.Labels["first"] != "yes" {
		t.Errorf("got size %d labels %v, want the patch's size 2 and the concurrent label", w.Spec.Size, w.Labels)
	}

	e.calls.Store(0)
	e.onPatch = func(call int32) {
		if call == 1 {
			bumpErr = e.bump("p", "second")
		}
	}
	r := e.must(409, "PATCH", widgetsPath+"/p", `{"metadata":{"resourceVersion":"`+w.ResourceVersion+`"},"spec":{"size":5}}`,
		"Content-Type: "+mediaMergePatch)
	if bumpErr != nil {
		t.Fatal(bumpErr)
	}
	if st := r.status(t); st.Reason != api.StatusReasonConflict {
		t.Errorf("reason %q, want Conflict", st.Reason)
	}
	e.must(200, "GET", widgetsPath+"/p", nil).into(t, &w)
	if w.Spec.Size != 2 || w.Labels["second"] != "yes" || w.UID != w0.UID {
		t.Errorf("after the conflict: size %d labels %v, want 2 and the concurrent label", w.Spec.Size, w.Labels)
	}
}

// TestPatchFallsBackInsideTransaction: an object that changes under every
// try is patched inside the transaction after optimisticTries, so a patch
// without resourceVersion never gets a Conflict.
func TestPatchFallsBackInsideTransaction(t *testing.T) {
	e := newUpdateEnv(t)
	e.createWidget("hot", nil, nil)
	var bumpErr error
	e.onPatch = func(call int32) {
		if err := e.bump("hot", "l"+strconv.Itoa(int(call))); err != nil {
			bumpErr = err
		}
	}
	var w widget
	e.must(200, "PATCH", widgetsPath+"/hot", `{"spec":{"size":7}}`, "Content-Type: "+mediaMergePatch).into(t, &w)
	if bumpErr != nil {
		t.Fatal(bumpErr)
	}
	if got, want := e.calls.Load(), int32(optimisticTries+1); got != want {
		t.Errorf("patcher called %d times, want %d", got, want)
	}
	if e.insides.Load() != 1 {
		t.Errorf("%d calls inside the transaction, want the last one", e.insides.Load())
	}
	if w.Spec.Size != 7 || len(w.Labels) != optimisticTries {
		t.Errorf("got size %d labels %v, want 7 and %d concurrent labels", w.Spec.Size, w.Labels, optimisticTries)
	}
}

// TestUpdateRetriesOnConcurrentWrite: a PUT without resourceVersion whose
// read goes stale is computed again from the body as sent (the first try's
// defaulting and server-owned fields do not leak into the second).
func TestUpdateRetriesOnConcurrentWrite(t *testing.T) {
	var (
		e        *testEnv
		armed    atomic.Bool
		defaults atomic.Int32
		bumpErr  error
	)
	info := *widgetInfo
	info.Default = func(o api.Object) {
		widgetInfo.Default(o)
		if armed.Load() && defaults.Add(1) == 1 {
			bumpErr = e.bump("u", "concurrent")
		}
	}
	res := []*api.ResourceInfo{namespaceInfo, podInfo, &info, gizmoInfo}
	e = newEnv(t, func(c *Config) { c.Resources = res })
	w0 := e.createWidget("u", nil, map[string]any{"size": 1})
	armed.Store(true)
	body := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "u", "labels": map[string]string{"put": "yes"}},
		"spec":     map[string]any{"size": 4}}
	var w widget
	e.must(200, "PUT", widgetsPath+"/u", body).into(t, &w)
	if bumpErr != nil {
		t.Fatal(bumpErr)
	}
	if n := defaults.Load(); n != 2 {
		t.Errorf("defaulted %d times, want 2 (one stale read)", n)
	}
	if w.Spec.Size != 4 || w.Spec.Color != "blue" || w.Labels["put"] != "yes" || w.Labels["concurrent"] != "" || w.UID != w0.UID {
		t.Errorf("got %+v labels %v, want the PUT's object", w.Spec, w.Labels)
	}

	// A stale resourceVersion is a conflict.
	body["metadata"].(map[string]any)["resourceVersion"] = w0.ResourceVersion
	e.must(409, "PUT", widgetsPath+"/u", body)
}

// TestStoredObjectSizeLimit: an object whose encoding is over
// MaxObjectBytes is refused with 413 by create, PUT and PATCH, and nothing
// is written.
func TestStoredObjectSizeLimit(t *testing.T) {
	e := newEnv(t)
	items := make([]map[string]any, 0, 20000)
	for i := range cap(items) {
		items = append(items, map[string]any{"name": fmt.Sprintf("%090d", i)})
	}
	big := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "big"}, "spec": map[string]any{"items": items}}
	b, _ := json.Marshal(big)
	if len(b) <= MaxObjectBytes || len(b) > DefaultMaxBodyBytes {
		t.Fatalf("test object of %d bytes is not between the limits", len(b))
	}
	tooLarge := func(r resp) {
		t.Helper()
		if st := r.status(t); st.Reason != api.StatusReasonRequestEntityTooLarge || st.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("got %d %s: %s", st.Code, st.Reason, st.Message)
		}
	}
	tooLarge(e.must(413, "POST", widgetsPath, b))

	w := e.createWidget("big", nil, map[string]any{"size": 1})
	tooLarge(e.must(413, "PUT", widgetsPath+"/big", b))
	p, _ := json.Marshal(map[string]any{"spec": map[string]any{"items": items}})
	tooLarge(e.must(413, "PATCH", widgetsPath+"/big", p, "Content-Type: "+mediaMergePatch))
	var got widget
	e.must(200, "GET", widgetsPath+"/big", nil).into(t, &got)
	if got.ResourceVersion != w.ResourceVersion || len(got.Spec.Items) != 0 {
		t.Errorf("the refused writes changed the object: rv %s → %s, %d items", w.ResourceVersion, got.ResourceVersion, len(got.Spec.Items))
	}
}
