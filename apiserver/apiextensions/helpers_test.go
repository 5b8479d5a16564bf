package apiextensions

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

const testToken = "test-token"

// testEnv is an API server serving the built-in resources and
// customresourcedefinitions, with a Registry, over HTTPS on 127.0.0.1.
type testEnv struct {
	t      *testing.T
	url    string
	client *http.Client
	reg    *Registry
	st     store.Interface
}

func builtinGroups(res []*api.ResourceInfo) func(string) bool {
	groups := map[string]bool{}
	for _, r := range res {
		groups[r.Group] = true
	}
	return func(g string) bool { return groups[g] }
}

var storeAll = store.ListOptions{}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	st := storetest.MustOpenBoltAt(t, filepath.Join(t.TempDir(), "db"),
		store.BoltOptions{HistorySize: 200, ProgressInterval: 50 * time.Millisecond, NoSync: true})
	e := newEnvOver(t, st)
	e.must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"default"}}`)
	return e
}

// newEnvOver serves st (not creating the namespace default).
func newEnvOver(t *testing.T, st store.Interface) *testEnv {
	t.Helper()
	res := api.Resources()
	crd := CRDResource(Options{Reserved: builtinGroups(res)})
	res = append(res, crd)
	var srv *apiserver.Server
	lazy := &lateServed{}
	reg := NewRegistry(st, crd, lazy, nil)
	srv, err := apiserver.New(apiserver.Config{
		Store:         st,
		Resources:     res,
		Authenticator: apiserver.StaticTokens{testToken: {Name: "admin", Groups: []string{"system:masters"}}},
		Hooks:         map[string]apiserver.TxnHook{"customresourcedefinitions.apiextensions.k8s.io": reg.Hook()},
	})
	if err != nil {
		t.Fatal(err)
	}
	lazy.s = srv
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); reg.Run(ctx) }()
	hs := httptest.NewTLSServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		cancel()
		<-done
	})
	return &testEnv{t: t, url: hs.URL, client: hs.Client(), reg: reg, st: st}
}

type lateServed struct{ s *apiserver.Server }

func (l *lateServed) CheckCustomResources(res []apiserver.CustomResource) error {
	return l.s.CheckCustomResources(res)
}

func (l *lateServed) SetCustomResources(res []apiserver.CustomResource) error {
	return l.s.SetCustomResources(res)
}

type resp struct {
	code int
	body []byte
}

func (r resp) into(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// do sends body (a string) with the content type ct ("" is JSON).
func (e *testEnv) doCT(method, path, ct, body string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct == "" {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp{code: res.StatusCode, body: b}
}

func (e *testEnv) do(method, path, body string) resp {
	e.t.Helper()
	return e.doCT(method, path, "", body)
}

func (e *testEnv) must(code int, method, path, body string) resp {
	e.t.Helper()
	r := e.do(method, path, body)
	if r.code != code {
		e.t.Fatalf("%s %s: got %d, want %d: %s", method, path, r.code, code, bytes.TrimSpace(r.body))
	}
	return r
}

// mustCT is must with a content type.
func (e *testEnv) mustCT(code int, method, path, ct, body string) resp {
	e.t.Helper()
	r := e.doCT(method, path, ct, body)
	if r.code != code {
		e.t.Fatalf("%s %s: got %d, want %d: %s", method, path, r.code, code, bytes.TrimSpace(r.body))
	}
	return r
}

// crdJSON is a definition of widgets.example.com (namespaced, v1 storage
// and v1beta1 served, short name wd, category all).
const crdJSON = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced",
  "names":{"plural":"widgets","kind":"Widget","shortNames":["wd"],"categories":["all"]},
  "versions":[
   {"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
   {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},
    "subresources":{"status":{}}}]}}`

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

var testTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
