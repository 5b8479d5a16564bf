package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// ---- test resources ----

type widget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           widgetSpec   `json:"spec,omitempty"`
	Status         widgetStatus `json:"status,omitempty"`
}

type widgetSpec struct {
	Size  int          `json:"size,omitempty"`
	Color string       `json:"color,omitempty"`
	Items []widgetItem `json:"items,omitempty"`
}

type widgetItem struct {
	Name  string `json:"name"`
	Value int    `json:"value,omitempty"`
}

type widgetStatus struct {
	Phase string `json:"phase,omitempty"`
	Ready bool   `json:"ready,omitempty"`
}

type labelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values,omitempty"`
	} `json:"matchExpressions,omitempty"`
}

type gizmo struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           struct {
		Replicas *int32         `json:"replicas,omitempty"`
		Selector *labelSelector `json:"selector,omitempty"`
	} `json:"spec,omitempty"`
	Status struct {
		Replicas int32 `json:"replicas,omitempty"`
	} `json:"status,omitempty"`
}

type namespace struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           struct {
		Finalizers []string `json:"finalizers,omitempty"`
	} `json:"spec,omitempty"`
	Status struct {
		Phase string `json:"phase,omitempty"`
	} `json:"status,omitempty"`
}

type podCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastProbeTime      *api.Time `json:"lastProbeTime,omitempty"`
	LastTransitionTime *api.Time `json:"lastTransitionTime,omitempty"`
}

type pod struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           struct {
		NodeName                      string `json:"nodeName,omitempty"`
		TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
		Containers                    []struct {
			Name  string `json:"name"`
			Image string `json:"image,omitempty"`
		} `json:"containers,omitempty"`
	} `json:"spec,omitempty"`
	Status struct {
		Phase      string         `json:"phase,omitempty"`
		Conditions []podCondition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

var (
	widgetInfo = &api.ResourceInfo{
		Group: "example.com", Version: "v1", Resource: "widgets", Singular: "widget",
		Kind: "Widget", ListKind: "WidgetList", Namespaced: true, ShortNames: []string{"wd"},
		Subresources: []string{"status"},
		New:          func() api.Object { return &widget{} },
		Default: func(o api.Object) {
			w := o.(*widget)
			if w.Spec.Color == "" {
				w.Spec.Color = "blue"
			}
		},
		ValidateCreate: func(o api.Object) field.ErrorList {
			w := o.(*widget)
			var errs field.ErrorList
			if w.Spec.Color == "bad" {
				errs = append(errs, field.Invalid(field.NewPath("spec", "color"), "bad", "must be red, green or blue"))
				errs = append(errs, field.Required(field.NewPath("spec", "items").Index(0).Child("name"), "a bad widget needs a named item"))
			}
			if w.Spec.Size < 0 {
				errs = append(errs, field.Invalid(field.NewPath("spec", "size"), w.Spec.Size, "must be >= 0"))
			}
			return errs
		},
		ValidateUpdate: func(o, old api.Object) field.ErrorList {
			w := o.(*widget)
			if w.Spec.Size < 0 {
				return field.ErrorList{field.Invalid(field.NewPath("spec", "size"), w.Spec.Size, "must be >= 0")}
			}
			return nil
		},
		Fields: func(o api.Object) map[string]string {
			w := o.(*widget)
			return map[string]string{
				"metadata.name": w.Name, "metadata.namespace": w.Namespace,
				"spec.color": w.Spec.Color, "status.phase": w.Status.Phase,
			}
		},
	}
	gizmoInfo = &api.ResourceInfo{
		Group: "example.com", Version: "v1", Resource: "gizmos", Singular: "gizmo",
		Kind: "Gizmo", ListKind: "GizmoList", Namespaced: true,
		Subresources: []string{"status", "scale"},
		New:          func() api.Object { return &gizmo{} },
		Default: func(o api.Object) {
			g := o.(*gizmo)
			if g.Spec.Replicas == nil {
				one := int32(1)
				g.Spec.Replicas = &one
			}
		},
	}
	namespaceInfo = &api.ResourceInfo{
		Version: "v1", Resource: "namespaces", Singular: "namespace",
		Kind: "Namespace", ListKind: "NamespaceList", ShortNames: []string{"ns"},
		Subresources: []string{"status"},
		New:          func() api.Object { return &namespace{} },
	}
	podInfo = &api.ResourceInfo{
		Version: "v1", Resource: "pods", Singular: "pod",
		Kind: "Pod", ListKind: "PodList", Namespaced: true, ShortNames: []string{"po"}, Categories: []string{"all"},
		Subresources: []string{"status", "binding", "log", "exec", "attach", "portforward"},
		New:          func() api.Object { return &pod{} },
		Fields: func(o api.Object) map[string]string {
			p := o.(*pod)
			return map[string]string{
				"metadata.name": p.Name, "metadata.namespace": p.Namespace,
				"spec.nodeName": p.Spec.NodeName, "status.phase": p.Status.Phase,
			}
		},
	}
	testResources = []*api.ResourceInfo{namespaceInfo, podInfo, widgetInfo, gizmoInfo}
)

// ---- the test server ----

const testToken = "test-token"

var testNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

type testEnv struct {
	t      testing.TB
	srv    *httptest.Server
	s      *Server
	store  store.Interface // the real bbolt store (a test's option may wrap it in Config.Store)
	client *http.Client
	reg    *prometheus.Registry
}

type envOption func(*Config)

// testBoltOptions are the store options of newEnv. NoSync is on only to keep
// the suite fast: the tests check the server's behaviour, not durability
// (the store's own crash tests cover fsync); BenchmarkCreateParallel/fsync
// measures with it off.
func testBoltOptions() store.BoltOptions {
	return store.BoltOptions{HistorySize: 200, ProgressInterval: 50 * time.Millisecond, NoSync: true}
}

// openTestStore opens a bbolt store in a new file under t.TempDir(); its
// cleanup (registered by storetest) checks the file's invariants, closes it,
// reopens it and checks it again.
func openTestStore(t testing.TB, opts store.BoltOptions) *store.Bolt {
	t.Helper()
	return storetest.MustOpenBoltAt(t, filepath.Join(t.TempDir(), "db"), opts)
}

// newEnv serves testResources over HTTPS on 127.0.0.1 from a new bbolt store
// with testBoltOptions, and creates the namespace "default".
func newEnv(t testing.TB, opts ...envOption) *testEnv {
	t.Helper()
	return newEnvWithStore(t, testBoltOptions(), opts...)
}

// newEnvWithStore is newEnv with the store's options given.
func newEnvWithStore(t testing.TB, bo store.BoltOptions, opts ...envOption) *testEnv {
	t.Helper()
	// Opened first, so its cleanup (check and close) runs after the server's.
	st := openTestStore(t, bo)
	reg := prometheus.NewRegistry()
	cfg := Config{
		Store:         st,
		Resources:     testResources,
		Authenticator: StaticTokens{testToken: {Name: "admin", Groups: []string{"system:masters"}}},
		Registerer:    reg,
		Gatherer:      reg,
		Now:           func() time.Time { return testNow },
	}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewTLSServer(s.Handler())
	client := srv.Client()
	tr := client.Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	client.Transport = tr
	env := &testEnv{t: t, srv: srv, s: s, store: st, client: client, reg: reg}
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	env.createNS("default")
	return env
}

type resp struct {
	code   int
	body   []byte
	header http.Header
}

// status decodes the body as a Status.
func (r resp) status(t testing.TB) api.Status {
	t.Helper()
	var st api.Status
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("body is not a Status: %v: %s", err, r.body)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("body is not a Status: %s", r.body)
	}
	return st
}

func (r resp) into(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// do sends a request; body may be nil, a string, []byte or any value to
// encode as JSON. hdr are "Key: value" pairs; the token is added unless a
// header "Authorization" is given.
func (e *testEnv) do(method, path string, body any, hdr ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("encoding body: %v", err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatalf("request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("reading body: %v", err)
	}
	return resp{code: res.StatusCode, body: b, header: res.Header}
}

// must sends a request and fails the test unless the code is want.
func (e *testEnv) must(want int, method, path string, body any, hdr ...string) resp {
	e.t.Helper()
	r := e.do(method, path, body, hdr...)
	if r.code != want {
		e.t.Fatalf("%s %s: code %d, want %d: %s", method, path, r.code, want, r.body)
	}
	return r
}

func (e *testEnv) createNS(name string) {
	e.t.Helper()
	e.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": name}})
}

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

func (e *testEnv) createWidget(name string, labels map[string]string, spec map[string]any) widget {
	e.t.Helper()
	body := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec":     spec,
	}
	var w widget
	e.must(201, "POST", widgetsPath, body).into(e.t, &w)
	return w
}

// ---- watch client ----

type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (ev watchEvent) meta(t testing.TB) api.ObjectMeta {
	t.Helper()
	var o struct {
		Metadata api.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(ev.Object, &o); err != nil {
		t.Fatalf("decoding event object: %v", err)
	}
	return o.Metadata
}

type watcher struct {
	t      testing.TB
	res    *http.Response
	events chan watchEvent
	cancel context.CancelFunc
	done   chan struct{}
}

func (e *testEnv) watch(path string) *watcher {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := e.client.Do(req)
	if err != nil {
		cancel()
		e.t.Fatalf("watch %s: %v", path, err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		cancel()
		e.t.Fatalf("watch %s: code %d: %s", path, res.StatusCode, b)
	}
	w := &watcher{t: e.t, res: res, events: make(chan watchEvent, 1000), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer close(w.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev watchEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ev = watchEvent{Type: "UNPARSEABLE", Object: json.RawMessage(fmt.Sprintf("%q", sc.Text()))}
			}
			w.events <- ev
		}
	}()
	e.t.Cleanup(w.stop)
	return w
}

func (w *watcher) stop() {
	w.cancel()
	<-w.done
	w.res.Body.Close()
}

// next returns the next event, skipping bookmarks unless wanted.
func (w *watcher) next(bookmarks bool) watchEvent {
	w.t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				w.t.Fatalf("watch ended, wanted an event")
			}
			if ev.Type == "BOOKMARK" && !bookmarks {
				continue
			}
			return ev
		case <-timeout:
			w.t.Fatalf("no watch event within 5s")
		}
	}
}

// expectNone fails if a non-bookmark event arrives within d.
func (w *watcher) expectNone(d time.Duration) {
	w.t.Helper()
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				return
			}
			if ev.Type != "BOOKMARK" {
				w.t.Fatalf("unexpected event %s %s", ev.Type, ev.Object)
			}
		case <-timeout:
			return
		}
	}
}

// ---- hooks ----

type admitted struct {
	Op          Op
	Name        string
	Subresource string
}

// recordingHook records admissions and outcomes; failName makes it fail.
type recordingHook struct {
	mu       sync.Mutex
	admits   []admitted
	commits  []string
	aborts   []string
	failName string
	failErr  error
	put      func(tx store.Txn, a Admission) error
}

func (h *recordingHook) Admit(ctx context.Context, tx store.Txn, a Admission) (Outcome, error) {
	name := a.Obj.GetObjectMeta().Name
	h.mu.Lock()
	h.admits = append(h.admits, admitted{a.Op, name, a.Subresource})
	h.mu.Unlock()
	if name == h.failName {
		return Outcome{}, h.failErr
	}
	if h.put != nil {
		if err := h.put(tx, a); err != nil {
			return Outcome{}, err
		}
	}
	tag := string(a.Op) + " " + name
	return Outcome{
		OnCommit: func() { h.mu.Lock(); h.commits = append(h.commits, tag); h.mu.Unlock() },
		OnAbort:  func() { h.mu.Lock(); h.aborts = append(h.aborts, tag); h.mu.Unlock() },
	}, nil
}

func (h *recordingHook) snapshot() (admits []admitted, commits, aborts []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]admitted(nil), h.admits...), append([]string(nil), h.commits...), append([]string(nil), h.aborts...)
}
