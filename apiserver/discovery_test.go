package apiserver

import (
	"strings"
	"testing"
	"time"
)

func TestDiscovery(t *testing.T) {
	e := newEnv(t)
	var versions apiVersions
	e.must(200, "GET", "/api", nil).into(t, &versions)
	if versions.Kind != "APIVersions" || len(versions.Versions) != 1 || versions.Versions[0] != "v1" ||
		len(versions.ServerAddressByClientCIDRs) != 1 || versions.ServerAddressByClientCIDRs[0].ClientCIDR != "0.0.0.0/0" ||
		!strings.HasPrefix(versions.ServerAddressByClientCIDRs[0].ServerAddress, "127.0.0.1:") {
		t.Errorf("/api: %+v", versions)
	}

	find := func(l apiResourceList, name string) *apiResource {
		for i := range l.Resources {
			if l.Resources[i].Name == name {
				return &l.Resources[i]
			}
		}
		t.Fatalf("%s not in %s discovery", name, l.GroupVersion)
		return nil
	}
	var core apiResourceList
	e.must(200, "GET", "/api/v1", nil).into(t, &core)
	if core.Kind != "APIResourceList" || core.GroupVersion != "v1" {
		t.Fatalf("/api/v1: %+v", core)
	}
	pods := find(core, "pods")
	if !pods.Namespaced || pods.Kind != "Pod" || pods.SingularName != "pod" || strings.Join(pods.ShortNames, ",") != "po" ||
		strings.Join(pods.Verbs, ",") != "create,delete,deletecollection,get,list,patch,update,watch" {
		t.Errorf("pods: %+v", pods)
	}
	if strings.Join(pods.Categories, ",") != "all" {
		t.Errorf("pods categories: %v", pods.Categories)
	}
	if ns := find(core, "namespaces"); ns.Namespaced || strings.Join(ns.ShortNames, ",") != "ns" || ns.Categories != nil {
		t.Errorf("namespaces: %+v", ns)
	}
	if s := find(core, "pods/status"); s.Kind != "Pod" || strings.Join(s.Verbs, ",") != "get,patch,update" {
		t.Errorf("pods/status: %+v", s)
	}
	if s := find(core, "pods/binding"); s.Kind != "Binding" || strings.Join(s.Verbs, ",") != "create" {
		t.Errorf("pods/binding: %+v", s)
	}
	if s := find(core, "pods/log"); strings.Join(s.Verbs, ",") != "get" {
		t.Errorf("pods/log: %+v", s)
	}
	for _, sub := range []string{"exec", "attach", "portforward"} {
		if s := find(core, "pods/"+sub); strings.Join(s.Verbs, ",") != "create,get" || !strings.HasPrefix(s.Kind, "Pod") || !strings.HasSuffix(s.Kind, "Options") {
			t.Errorf("pods/%s: %+v", sub, s)
		}
	}
	if s := find(core, "namespaces/finalize"); strings.Join(s.Verbs, ",") != "update" {
		t.Errorf("namespaces/finalize: %+v", s)
	}

	var ex apiResourceList
	e.must(200, "GET", "/apis/example.com/v1", nil).into(t, &ex)
	if ex.GroupVersion != "example.com/v1" {
		t.Errorf("group version %q", ex.GroupVersion)
	}
	if s := find(ex, "gizmos/scale"); s.Kind != "Scale" || s.Group != "autoscaling" || s.Version != "v1" {
		t.Errorf("gizmos/scale: %+v", s)
	}
	if w := find(ex, "widgets"); strings.Join(w.ShortNames, ",") != "wd" {
		t.Errorf("widgets: %+v", w)
	}

	var groups apiGroupList
	e.must(200, "GET", "/apis", nil).into(t, &groups)
	if groups.Kind != "APIGroupList" || len(groups.Groups) != 1 || groups.Groups[0].Name != "example.com" ||
		groups.Groups[0].PreferredVersion.GroupVersion != "example.com/v1" || groups.Groups[0].Versions[0].Version != "v1" {
		t.Errorf("/apis: %+v", groups)
	}
	var group apiGroup
	e.must(200, "GET", "/apis/example.com", nil).into(t, &group)
	if group.Kind != "APIGroup" || group.Name != "example.com" || group.PreferredVersion.Version != "v1" {
		t.Errorf("/apis/example.com: %+v", group)
	}
	e.must(404, "GET", "/apis/nope.io", nil)
	e.must(404, "GET", "/apis/example.com/v2", nil)
}

func TestHealthAndVersion(t *testing.T) {
	ready := false
	e := newEnv(t, func(c *Config) { c.Ready = func() bool { return ready } })
	noAuth := "Authorization: "
	for _, p := range []string{"/healthz", "/livez"} {
		if r := e.must(200, "GET", p, nil, noAuth); string(r.body) != "ok" {
			t.Errorf("%s: %q", p, r.body)
		}
	}
	e.must(503, "GET", "/readyz", nil, noAuth)
	ready = true
	if r := e.must(200, "GET", "/readyz", nil, noAuth); string(r.body) != "ok" {
		t.Errorf("/readyz: %q", r.body)
	}
	var v VersionInfo
	e.must(200, "GET", "/version", nil, noAuth).into(t, &v)
	if v.Major != "1" || v.Minor != "31" || v.GitVersion != "v1.31.0-skiff" || v.GoVersion == "" || !strings.Contains(v.Platform, "/") {
		t.Errorf("/version: %+v", v)
	}
	e.must(401, "GET", "/metrics", nil, noAuth)
}

func TestMetricsExposition(t *testing.T) {
	e := newEnv(t)
	e.createWidget("w", nil, nil)
	e.must(200, "GET", widgetsPath+"/w", nil)
	e.must(404, "GET", widgetsPath+"/missing", nil)
	e.must(200, "GET", widgetsPath, nil)
	wants := []string{
		`apiserver_request_total{code="201",resource="widgets",verb="create"} 1`,
		`apiserver_request_total{code="200",resource="widgets",verb="get"} 1`,
		`apiserver_request_total{code="404",resource="widgets",verb="get"} 1`,
		`apiserver_request_total{code="200",resource="widgets",verb="list"} 1`,
		`apiserver_request_total{code="201",resource="namespaces",verb="create"} 1`,
		`apiserver_request_duration_seconds_bucket{resource="widgets",verb="create",le="+Inf"} 1`,
		`apiserver_request_duration_seconds_count{resource="widgets",verb="get"} 2`,
		"# TYPE apiserver_watchers gauge",
		"apiserver_watchers 0",
	}
	// Requests are counted after their response is sent: poll briefly.
	var body string
	for try := 0; try < 100; try++ {
		body = string(e.must(200, "GET", "/metrics", nil).body)
		if strings.Contains(body, wants[3]) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
