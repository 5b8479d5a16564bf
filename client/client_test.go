package client_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

type widgetSpec struct {
	Size  int    `json:"size,omitempty"`
	Color string `json:"color,omitempty"`
}

type widgetStatus struct {
	Phase string `json:"phase,omitempty"`
}

type widget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
	Spec           widgetSpec   `json:"spec"`
	Status         widgetStatus `json:"status"`
}

type widgetList struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ListMeta `json:"metadata"`
	Items        []widget     `json:"items"`
}

var (
	widgets = &api.ResourceInfo{Version: "v1", Resource: "widgets", Kind: "Widget", ListKind: "WidgetList", Namespaced: true}
	gadgets = &api.ResourceInfo{Group: "example.skiff.dev", Version: "v1", Resource: "gadgets", Kind: "Gadget", ListKind: "GadgetList"}
	nsInfo  = &api.ResourceInfo{Version: "v1", Resource: "namespaces", Kind: "Namespace", ListKind: "NamespaceList"}
)

// caPEM is the PEM of the test server's certificate (httptest's server
// certificate is its own CA).
func caPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// startFixture serves a fixture over HTTPS on 127.0.0.1 and returns a client
// that verifies the server with its CA, as a kubeconfig would.
func startFixture(t *testing.T) (*fixture, *client.Client, *httptest.Server) {
	t.Helper()
	f := newFixture(t)
	srv := httptest.NewUnstartedServer(f)
	// The kubeconfig test makes a client reject the certificate on purpose.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Server: srv.URL, CAPEM: caPEM(srv), Token: fixtureToken, UserAgent: "skiff-test"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f, c, srv
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestCRUD(t *testing.T) {
	f, c, _ := startFixture(t)
	ctx := ctxT(t)

	w := &widget{ObjectMeta: api.ObjectMeta{Name: "w1"}, Spec: widgetSpec{Size: 3}}
	if err := c.Create(ctx, widgets, "default", w); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if w.UID == "" || w.ResourceVersion == "" || w.Namespace != "default" {
		t.Fatalf("Create did not decode the server's answer: %+v", w.ObjectMeta)
	}
	if w.APIVersion != "v1" || w.Kind != "Widget" {
		t.Fatalf("Create did not fill TypeMeta: %+v", w.TypeMeta)
	}
	req := f.lastRequest()
	if req.Method != http.MethodPost || req.EscapedPath != "/api/v1/namespaces/default/widgets" || req.UserAgent != "skiff-test" {
		t.Fatalf("Create sent %+v", req)
	}

	if err := c.Create(ctx, widgets, "default", &widget{ObjectMeta: api.ObjectMeta{Name: "w1"}}); !client.IsAlreadyExists(err) {
		t.Fatalf("second Create: want AlreadyExists, got %v", err)
	}
	if err := c.Create(ctx, widgets, "default", &widget{}); !client.IsInvalid(err) {
		t.Fatalf("Create without name: want Invalid, got %v", err)
	}

	var got widget
	if err := c.Get(ctx, widgets, "default", "w1", &got); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.UID != w.UID || got.Spec.Size != 3 {
		t.Fatalf("Get = %+v", got)
	}

	stale := got
	got.Spec.Color = "red"
	if err := c.Update(ctx, widgets, "", &got); err != nil { // namespace from the object
		t.Fatalf("Update: %v", err)
	}
	if got.ResourceVersion == stale.ResourceVersion {
		t.Fatal("Update did not decode the new resourceVersion")
	}
	stale.Spec.Color = "blue"
	err := c.Update(ctx, widgets, "default", &stale)
	if !client.IsConflict(err) || client.IsAlreadyExists(err) {
		t.Fatalf("stale Update: want Conflict, got %v", err)
	}

	got.Status.Phase = "Ready"
	got.Spec.Size = 99 // ignored by /status
	if err := c.UpdateStatus(ctx, widgets, "default", &got); err != nil {
		t.Fatalf("UpdateStatus: %v", err)
	}
	if req := f.lastRequest(); req.EscapedPath != "/api/v1/namespaces/default/widgets/w1/status" || req.Method != http.MethodPut {
		t.Fatalf("UpdateStatus sent %s %s", req.Method, req.EscapedPath)
	}
	if got.Status.Phase != "Ready" || got.Spec.Size != 3 {
		t.Fatalf("UpdateStatus result %+v", got)
	}

	var patched widget
	if err := c.Patch(ctx, widgets, "default", "w1", client.MergePatchType, []byte(`{"spec":{"size":7}}`), &patched); err != nil {
		t.Fatalf("merge Patch: %v", err)
	}
	if req := f.lastRequest(); req.ContentType != client.MergePatchType || req.Method != http.MethodPatch {
		t.Fatalf("Patch sent %s with %q", req.Method, req.ContentType)
	}
	if patched.Spec.Size != 7 || patched.Spec.Color != "red" {
		t.Fatalf("merge Patch result %+v", patched.Spec)
	}
	jp := fmt.Sprintf(`[{"op":"test","path":"/metadata/resourceVersion","value":%q},{"op":"replace","path":"/spec/size","value":8}]`, patched.ResourceVersion)
	if err := c.Patch(ctx, widgets, "default", "w1", client.JSONPatchType, []byte(jp), nil); err != nil {
		t.Fatalf("JSON Patch: %v", err)
	}
	if err := c.Patch(ctx, widgets, "default", "w1", client.JSONPatchType, []byte(jp), nil); !client.IsInvalid(err) {
		t.Fatalf("JSON Patch with a failing test: want Invalid, got %v", err)
	}
	if err := c.Patch(ctx, widgets, "default", "w1", "application/yaml", []byte(`{}`), nil); !errors.Is(err, client.ErrInvalidRequest) {
		t.Fatalf("Patch with unknown type: want ErrInvalidRequest, got %v", err)
	}

	if err := c.Delete(ctx, widgets, "default", "w1", client.DeleteOptions{}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := c.Get(ctx, widgets, "default", "w1", &got); !client.IsNotFound(err) {
		t.Fatalf("Get after Delete: want NotFound, got %v", err)
	}
	if err := c.Delete(ctx, widgets, "default", "w1", client.DeleteOptions{}); !client.IsNotFound(err) {
		t.Fatalf("second Delete: want NotFound, got %v", err)
	}
}

func TestDeleteOptionsOnTheWire(t *testing.T) {
	f, c, _ := startFixture(t)
	ctx := ctxT(t)
	if err := c.Create(ctx, widgets, "ns1", &widget{ObjectMeta: api.ObjectMeta{Name: "w"}}); err != nil {
		t.Fatal(err)
	}
	grace := int64(0)
	err := c.Delete(ctx, widgets, "ns1", "w", client.DeleteOptions{
		PropagationPolicy:  client.DeletePropagationForeground,
		GracePeriodSeconds: &grace,
		Preconditions:      &client.Preconditions{UID: "uid-1"},
	})
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	req := f.lastRequest()
	if req.Method != http.MethodDelete || req.EscapedPath != "/api/v1/namespaces/ns1/widgets/w" {
		t.Fatalf("Delete sent %s %s", req.Method, req.EscapedPath)
	}
	if req.Query.Get("propagationPolicy") != "Foreground" || req.Query.Get("gracePeriodSeconds") != "0" {
		t.Fatalf("Delete query = %v", req.Query)
	}
	var body map[string]any
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("Delete body %q: %v", req.Body, err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Foreground",
		"gracePeriodSeconds": float64(0), "preconditions": map[string]any{"uid": "uid-1"},
	}
	if fmt.Sprint(body) != fmt.Sprint(want) {
		t.Fatalf("Delete body = %v, want %v", body, want)
	}
}

func TestErrors(t *testing.T) {
	f, c, srv := startFixture(t)
	ctx := ctxT(t)

	badToken, err := client.New(client.Config{Server: srv.URL, CAPEM: caPEM(srv), Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	noToken, err := client.New(client.Config{Server: srv.URL, CAPEM: caPEM(srv)})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		call     func() error
		is       func(error) bool
		code     int32
		notOther []func(error) bool
	}{
		{"wrong token", func() error { return badToken.Get(ctx, widgets, "a", "b", &widget{}) }, client.IsUnauthorized, 401, []func(error) bool{client.IsForbidden}},
		{"no token", func() error { return noToken.List(ctx, widgets, "", client.ListOptions{}, &client.RawList{}) }, client.IsUnauthorized, 401, nil},
		{"not found", func() error { return c.Get(ctx, gadgets, "", "nope", &widget{}) }, client.IsNotFound, 404, []func(error) bool{client.IsGone, client.IsConflict}},
		{"non-Status body", func() error {
			f.mu.Lock()
			f.failNext = http.StatusServiceUnavailable
			f.mu.Unlock()
			return c.Get(ctx, widgets, "a", "b", &widget{})
		}, func(err error) bool { return client.ReasonForError(err) == api.StatusReasonServiceUnavailable }, 503, []func(error) bool{client.IsNotFound}},
		{"plain 403", func() error {
			f.mu.Lock()
			f.failNext = http.StatusForbidden
			f.mu.Unlock()
			return c.Get(ctx, widgets, "a", "b", &widget{})
		}, client.IsForbidden, 403, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !tc.is(err) {
				t.Fatalf("unexpected error %v", err)
			}
			var ae *client.APIError
			if !errors.As(err, &ae) || ae.Status.Code != tc.code {
				t.Fatalf("want APIError with code %d, got %#v", tc.code, err)
			}
			if ae.Status.Message == "" {
				t.Fatal("APIError without message")
			}
			for i, other := range tc.notOther {
				if other(err) {
					t.Fatalf("error also matched unrelated helper %d: %v", i, err)
				}
			}
			wrapped := fmt.Errorf("outer: %w", err)
			if !tc.is(wrapped) {
				t.Fatalf("helper does not see through wrapping: %v", wrapped)
			}
		})
	}

	if client.IsNotFound(errors.New("not found")) || client.IsNotFound(nil) {
		t.Fatal("IsNotFound matched a non-APIError")
	}
}

func TestResourcePath(t *testing.T) {
	tests := []struct {
		name    string
		info    *api.ResourceInfo
		ns, obj string
		sub     []string
		want    string
		wantErr bool
	}{
		{name: "core namespaced object", info: widgets, ns: "default", obj: "w1", want: "/api/v1/namespaces/default/widgets/w1"},
		{name: "core collection", info: widgets, ns: "default", want: "/api/v1/namespaces/default/widgets"},
		{name: "all namespaces", info: widgets, want: "/api/v1/widgets"},
		{name: "subresource", info: widgets, ns: "default", obj: "w1", sub: []string{"status"}, want: "/api/v1/namespaces/default/widgets/w1/status"},
		{name: "cluster-scoped core", info: nsInfo, obj: "kube-system", sub: []string{"finalize"}, want: "/api/v1/namespaces/kube-system/finalize"},
		{name: "grouped cluster-scoped", info: gadgets, obj: "g", want: "/apis/example.skiff.dev/v1/gadgets/g"},
		{name: "grouped namespaced", info: &api.ResourceInfo{Group: "apps", Version: "v1", Resource: "deployments", Namespaced: true}, ns: "x", obj: "d", want: "/apis/apps/v1/namespaces/x/deployments/d"},
		{name: "escaped name", info: gadgets, obj: "a b?c#d", want: "/apis/example.skiff.dev/v1/gadgets/a%20b%3Fc%23d"},
		{name: "ipv6 name", info: gadgets, obj: "2001:db8::1", want: "/apis/example.skiff.dev/v1/gadgets/2001:db8::1"},
		{name: "slash in name", info: gadgets, obj: "a/b", wantErr: true},
		{name: "percent in name", info: gadgets, obj: "a%2Fb", wantErr: true},
		{name: "dot-dot name", info: widgets, ns: "default", obj: "..", wantErr: true},
		{name: "dot namespace", info: widgets, ns: ".", obj: "x", wantErr: true},
		{name: "namespace for cluster-scoped", info: gadgets, ns: "default", obj: "g", wantErr: true},
		{name: "subresource without name", info: widgets, ns: "default", sub: []string{"status"}, wantErr: true},
		{name: "nil info", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := client.ResourcePath(tc.info, tc.ns, tc.obj, tc.sub...)
			if tc.wantErr {
				if !errors.Is(err, client.ErrInvalidRequest) {
					t.Fatalf("want ErrInvalidRequest, got %q, %v", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestEscapingOnTheWire(t *testing.T) {
	f, c, _ := startFixture(t)
	ctx := ctxT(t)
	for _, name := range []string{"a b", "2001:db8::1", "q?x"} {
		obj := &widget{ObjectMeta: api.ObjectMeta{Name: name}}
		if err := c.Create(ctx, gadgets, "", obj); err != nil {
			t.Fatalf("Create %q: %v", name, err)
		}
		var got widget
		if err := c.Get(ctx, gadgets, "", name, &got); err != nil {
			t.Fatalf("Get %q: %v", name, err)
		}
		if got.Name != name || got.Namespace != "" {
			t.Fatalf("Get %q returned %q in %q", name, got.Name, got.Namespace)
		}
		if req := f.lastRequest(); !strings.HasPrefix(req.EscapedPath, "/apis/example.skiff.dev/v1/gadgets/") || strings.Contains(req.EscapedPath, " ") || strings.Contains(req.EscapedPath, "?") {
			t.Fatalf("path not escaped: %q", req.EscapedPath)
		}
	}
	if err := c.Get(ctx, widgets, "", "w", &widget{}); !errors.Is(err, client.ErrInvalidRequest) {
		t.Fatalf("Get of a namespaced object without namespace: want ErrInvalidRequest, got %v", err)
	}
	if err := c.Create(ctx, widgets, "a", &widget{ObjectMeta: api.ObjectMeta{Name: "w", Namespace: "b"}}); !errors.Is(err, client.ErrInvalidRequest) {
		t.Fatalf("Create with conflicting namespaces: want ErrInvalidRequest, got %v", err)
	}
}

func TestListPagingAndSelectors(t *testing.T) {
	f, c, _ := startFixture(t)
	ctx := ctxT(t)
	for i := range 5 {
		ns := "a"
		if i%2 == 1 {
			ns = "b"
		}
		w := &widget{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("w%d", i), Labels: map[string]string{"odd": fmt.Sprint(i%2 == 1)}}}
		if err := c.Create(ctx, widgets, ns, w); err != nil {
			t.Fatal(err)
		}
	}

	var names []string
	opts := client.ListOptions{Limit: 2}
	pages := 0
	for {
		var page client.RawList
		if err := c.List(ctx, widgets, "", opts, &page); err != nil {
			t.Fatalf("List: %v", err)
		}
		pages++
		if page.Metadata.ResourceVersion == "" {
			t.Fatal("list without resourceVersion")
		}
		for _, raw := range page.Items {
			var w widget
			if err := json.Unmarshal(raw, &w); err != nil {
				t.Fatal(err)
			}
			names = append(names, w.Namespace+"/"+w.Name)
		}
		if page.Metadata.Continue == "" {
			break
		}
		opts.Continue = page.Metadata.Continue
	}
	if pages != 3 || len(names) != 5 {
		t.Fatalf("paged list: %d pages, names %v", pages, names)
	}
	if req := f.lastRequest(); req.EscapedPath != "/api/v1/widgets" || req.Query.Get("limit") != "2" || req.Query.Get("continue") == "" {
		t.Fatalf("List sent %s?%v", req.EscapedPath, req.Query)
	}

	var typed widgetList
	if err := c.List(ctx, widgets, "b", client.ListOptions{LabelSelector: "odd=true", FieldSelector: "metadata.name!=x"}, &typed); err != nil {
		t.Fatalf("typed List: %v", err)
	}
	if len(typed.Items) != 2 || typed.Items[0].Namespace != "b" {
		t.Fatalf("typed List = %+v", typed.Items)
	}
	req := f.lastRequest()
	if req.EscapedPath != "/api/v1/namespaces/b/widgets" || req.Query.Get("labelSelector") != "odd=true" || req.Query.Get("fieldSelector") != "metadata.name!=x" {
		t.Fatalf("List sent %s?%v", req.EscapedPath, req.Query)
	}
	if req.Query.Has("watch") || req.Query.Has("limit") {
		t.Fatalf("List sent unexpected parameters %v", req.Query)
	}
}

func TestDoAndUnstructured(t *testing.T) {
	_, c, _ := startFixture(t)
	ctx := ctxT(t)
	in := map[string]any{
		"apiVersion": "v1", "kind": "Widget",
		"metadata": map[string]any{"name": "u"},
		"spec":     map[string]any{"size": 1, "unknownToThisProgram": []any{"x"}},
	}
	var raw []byte
	if err := c.Do(ctx, http.MethodPost, "/api/v1/namespaces/default/widgets", in, &raw); err != nil {
		t.Fatalf("Do POST: %v", err)
	}
	if !strings.Contains(string(raw), `"uid"`) {
		t.Fatalf("Do did not return the raw body: %s", raw)
	}
	if err := c.Do(ctx, http.MethodGet, "api/v1/x", nil, nil); !errors.Is(err, client.ErrInvalidRequest) {
		t.Fatalf("Do with a relative path: %v", err)
	}
	if err := c.Do(ctx, http.MethodGet, "/api/v1/namespaces/default/widgets/none", nil, nil); !client.IsNotFound(err) {
		t.Fatalf("Do GET missing: %v", err)
	}

	var u client.Unstructured
	if err := c.Get(ctx, widgets, "default", "u", &u); err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if ok, err := u.Field("spec", &spec); !ok || err != nil {
		t.Fatalf("Field spec: %v %v", ok, err)
	}
	spec["size"] = 2
	if err := u.SetField("spec", spec); err != nil {
		t.Fatal(err)
	}
	u.Labels = map[string]string{"l": "v"}
	if err := c.Update(ctx, widgets, "default", &u); err != nil {
		t.Fatalf("Update unstructured: %v", err)
	}
	var back map[string]any
	if err := c.Do(ctx, http.MethodGet, "/api/v1/namespaces/default/widgets/u", nil, &back); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(back["spec"], back["metadata"].(map[string]any)["labels"])
	if got != "map[size:2 unknownToThisProgram:[x]] map[l:v]" {
		t.Fatalf("round trip lost fields: %s", got)
	}
}

// nextEvent waits for one event or fails.
func nextEvent(t *testing.T, w *client.Watcher) client.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed early: %v", w.Err())
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	return client.Event{}
}

func TestWatch(t *testing.T) {
	f, c, _ := startFixture(t)
	ctx := ctxT(t)

	if err := c.Create(ctx, widgets, "default", &widget{ObjectMeta: api.ObjectMeta{Name: "before"}}); err != nil {
		t.Fatal(err)
	}
	var list client.RawList
	if err := c.List(ctx, widgets, "default", client.ListOptions{}, &list); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, widgets, "default", client.ListOptions{ResourceVersion: list.Metadata.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	defer w.Stop()
	req := f.lastRequest()
	if req.Query.Get("watch") != "true" || req.Query.Get("resourceVersion") != list.Metadata.ResourceVersion || req.Query.Get("allowWatchBookmarks") != "true" {
		t.Fatalf("Watch sent %v", req.Query)
	}

	obj := &widget{ObjectMeta: api.ObjectMeta{Name: "w"}}
	if err := c.Create(ctx, widgets, "default", obj); err != nil {
		t.Fatal(err)
	}
	// An object in another namespace is not seen by this watch.
	if err := c.Create(ctx, widgets, "other", &widget{ObjectMeta: api.ObjectMeta{Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	obj.Spec.Size = 5
	if err := c.Update(ctx, widgets, "default", obj); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, widgets, "default", "w", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		typ  string
		size int
	}{{client.EventAdded, 0}, {client.EventModified, 5}, {client.EventDeleted, 5}} {
		ev := nextEvent(t, w)
		var got widget
		if err := json.Unmarshal(ev.Object, &got); err != nil {
			t.Fatal(err)
		}
		if ev.Type != want.typ || got.Name != "w" || got.Spec.Size != want.size || ev.Err() != nil {
			t.Fatalf("event %s %s size %d, want %s size %d", ev.Type, got.Name, got.Spec.Size, want.typ, want.size)
		}
	}

	w.Stop()
	w.Stop() // idempotent
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("ResultChan open after Stop")
	}
	if !errors.Is(w.Err(), client.ErrWatchStopped) {
		t.Fatalf("Err after Stop = %v", w.Err())
	}
}

func TestWatchEnds(t *testing.T) {
	f, c, srv := startFixture(t)
	ctx := ctxT(t)
	if err := c.Create(ctx, widgets, "default", &widget{ObjectMeta: api.ObjectMeta{Name: "a"}}); err != nil {
		t.Fatal(err)
	}

	t.Run("server ends the stream", func(t *testing.T) {
		zero := int64(0)
		w, err := c.Watch(ctx, widgets, "", client.ListOptions{ResourceVersion: "0", TimeoutSeconds: &zero})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		<-w.Done()
		if w.Err() != nil {
			t.Fatalf("Err after a clean end = %v", w.Err())
		}
	})

	t.Run("ctx cancelled", func(t *testing.T) {
		wctx, cancel := context.WithCancel(ctx)
		w, err := c.Watch(wctx, widgets, "", client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("watch did not end with its ctx")
		}
		if _, ok := <-w.ResultChan(); ok {
			t.Fatal("ResultChan open after ctx end")
		}
		if !errors.Is(w.Err(), client.ErrWatchStopped) {
			t.Fatalf("Err = %v", w.Err())
		}
	})

	t.Run("compacted revision gets 410 Gone", func(t *testing.T) {
		if err := c.Create(ctx, widgets, "default", &widget{ObjectMeta: api.ObjectMeta{Name: "b"}}); err != nil {
			t.Fatal(err)
		}
		f.compact()
		w, err := c.Watch(ctx, widgets, "default", client.ListOptions{ResourceVersion: "1"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev := nextEvent(t, w)
		if ev.Type != client.EventError || !client.IsGone(ev.Err()) {
			t.Fatalf("want ERROR 410, got %s %v", ev.Type, ev.Err())
		}
	})

	t.Run("refused watch", func(t *testing.T) {
		noAuth, err := client.New(client.Config{Server: srv.URL, CAPEM: caPEM(srv)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := noAuth.Watch(ctx, widgets, "", client.ListOptions{}); !client.IsUnauthorized(err) {
			t.Fatalf("unauthenticated Watch: want Unauthorized, got %v", err)
		}
	})
}

func TestNewWatcherProducer(t *testing.T) {
	produced := make(chan struct{})
	w := client.NewWatcher(context.Background(), func(ctx context.Context, send func(client.Event) bool) error {
		defer close(produced)
		for i := 0; ; i++ {
			if !send(client.Event{Type: client.EventAdded, Object: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}) {
				return nil
			}
		}
	})
	if ev := <-w.ResultChan(); string(ev.Object) != `{"i":0}` {
		t.Fatalf("first event %s", ev.Object)
	}
	w.Stop()
	<-produced
	if !errors.Is(w.Err(), client.ErrWatchStopped) {
		t.Fatalf("Err = %v", w.Err())
	}

	boom := errors.New("boom")
	w = client.NewWatcher(context.Background(), func(ctx context.Context, send func(client.Event) bool) error { return boom })
	<-w.Done()
	if !errors.Is(w.Err(), boom) {
		t.Fatalf("Err = %v, want boom", w.Err())
	}
}

func writeKubeconfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const kubeconfigTmpl = `apiVersion: v1
kind: Config
current-context: %s
clusters:
- name: skiff
  cluster:
    server: %s
    %s
- name: other
  cluster:
    server: https://192.0.2.1:6443
users:
- name: admin
  user:
    %s
contexts:
- name: skiff
  context:
    cluster: skiff
    user: admin
    namespace: team-a
- name: dangling
  context:
    cluster: missing
    user: admin
`

func TestFromKubeconfig(t *testing.T) {
	_, _, srv := startFixture(t)
	ctx := ctxT(t)
	dir := t.TempDir()
	ca := caPEM(srv)
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(fixtureToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	caData := "certificate-authority-data: " + base64.StdEncoding.EncodeToString(ca)

	tests := []struct {
		name      string
		body      string
		wantErr   string
		reachable bool
	}{
		{name: "inline CA and token", body: fmt.Sprintf(kubeconfigTmpl, "skiff", srv.URL, caData, "token: "+fixtureToken), reachable: true},
		{name: "CA file and token file", body: fmt.Sprintf(kubeconfigTmpl, "skiff", srv.URL, "certificate-authority: ca.crt", "tokenFile: token"), reachable: true},
		{name: "no CA: system roots reject the server", body: fmt.Sprintf(kubeconfigTmpl, "skiff", srv.URL, "", "token: "+fixtureToken)},
		{name: "missing context", body: fmt.Sprintf(kubeconfigTmpl, "nope", srv.URL, caData, "token: x"), wantErr: `context "nope" not found`},
		{name: "context names a missing cluster", body: fmt.Sprintf(kubeconfigTmpl, "dangling", srv.URL, caData, "token: x"), wantErr: `cluster "missing"`},
		{name: "bad CA data", body: fmt.Sprintf(kubeconfigTmpl, "skiff", srv.URL, "certificate-authority-data: '!!!'", "token: x"), wantErr: "certificate-authority-data"},
		{name: "no current context", body: "apiVersion: v1\nkind: Config\n", wantErr: "no current-context"},
		{name: "not YAML", body: "{{{", wantErr: "kubeconfig"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := client.FromKubeconfig(writeKubeconfig(t, dir, tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromKubeconfig: %v", err)
			}
			if cfg.Server != srv.URL || cfg.Token != fixtureToken || cfg.Namespace != "team-a" {
				t.Fatalf("config = %+v", cfg)
			}
			c, err := client.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = c.List(ctx, widgets, "", client.ListOptions{}, &client.RawList{})
			if tc.reachable && err != nil {
				t.Fatalf("List with kubeconfig: %v", err)
			}
			if !tc.reachable {
				var ae *client.APIError
				if err == nil || errors.As(err, &ae) {
					t.Fatalf("want a TLS verification error, got %v", err)
				}
			}
		})
	}
	if _, err := client.FromKubeconfig(filepath.Join(dir, "absent")); err == nil {
		t.Fatal("FromKubeconfig of a missing file succeeded")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  client.Config
	}{
		{"empty", client.Config{}},
		{"no scheme", client.Config{Server: "127.0.0.1:6443"}},
		{"ftp", client.Config{Server: "ftp://127.0.0.1"}},
		{"query", client.Config{Server: "https://127.0.0.1:6443/?x=1"}},
		{"bad CA", client.Config{Server: "https://127.0.0.1:6443", CAPEM: []byte("not pem")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := client.New(tc.cfg); !errors.Is(err, client.ErrInvalidRequest) {
				t.Fatalf("want ErrInvalidRequest, got %v", err)
			}
		})
	}
}

func TestServerPathPrefix(t *testing.T) {
	f := newFixture(t)
	mux := http.NewServeMux()
	mux.Handle("/prefix/", http.StripPrefix("/prefix", f))
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	c, err := client.New(client.Config{Server: srv.URL + "/prefix/", CAPEM: caPEM(srv), Token: fixtureToken})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctxT(t), widgets, "default", &widget{ObjectMeta: api.ObjectMeta{Name: "p q"}}); err != nil {
		t.Fatalf("Create behind a path prefix: %v", err)
	}
	if req := f.lastRequest(); req.EscapedPath != "/api/v1/namespaces/default/widgets" {
		t.Fatalf("path %q", req.EscapedPath)
	}
}
