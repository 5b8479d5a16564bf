package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

func TestHumanDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-5 * time.Second, "<invalid>"},
		{-time.Second, "0s"},
		{0, "0s"},
		{45 * time.Second, "45s"},
		{119 * time.Second, "119s"},
		{2 * time.Minute, "2m"},
		{3*time.Minute + 2*time.Second, "3m2s"},
		{12 * time.Minute, "12m"},
		{179 * time.Minute, "179m"},
		{4 * time.Hour, "4h"},
		{5*time.Hour + 30*time.Minute, "5h30m"},
		{20 * time.Hour, "20h"},
		{51 * time.Hour, "2d3h"},
		{72 * time.Hour, "3d"},
		{30 * 24 * time.Hour, "30d"},
		{(365*2 + 10) * 24 * time.Hour, "2y10d"},
		{365 * 9 * 24 * time.Hour, "9y"},
	} {
		t.Run(fmt.Sprint(tc.d), func(t *testing.T) {
			if got := humanDuration(tc.d); got != tc.want {
				t.Fatalf("humanDuration(%v) = %q, want %q", tc.d, got, tc.want)
			}
		})
	}
}

func TestColumnWriter(t *testing.T) {
	var b strings.Builder
	w := &columnWriter{out: &b}
	if err := w.write([][]string{{"NAME", "TYPE", "AGE"}, {"a", "ClusterIP", "5s"}}); err != nil {
		t.Fatal(err)
	}
	// later rows keep the widths, widening a column when needed
	if err := w.write([][]string{{"longer-name", "X", "1m"}}); err != nil {
		t.Fatal(err)
	}
	want := "NAME   TYPE        AGE\n" +
		"a      ClusterIP   5s\n" +
		"longer-name   X           1m\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestClientPrinters(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	created := api.NewTime(now.Add(-90 * time.Second))
	three := int32(3)
	port := int32(9090)
	for _, tc := range []struct {
		name     string
		resource string
		obj      string
		want     string
	}{
		{"loadbalancer pending", "services",
			`{"metadata":{"name":"lb","creationTimestamp":"` + created.Format(time.RFC3339) + `"},"spec":{"type":"LoadBalancer","clusterIP":"10.96.0.5","ports":[{"port":80,"nodePort":30080,"protocol":"TCP"}]}}`,
			"lb LoadBalancer 10.96.0.5 <pending> 80:30080/TCP 90s <none>"},
		{"external name", "services",
			`{"metadata":{"name":"ext"},"spec":{"type":"ExternalName","externalName":"db.example.com"}}`,
			"ext ExternalName <none> db.example.com <none> <unknown> <none>"},
		{"headless", "services",
			`{"metadata":{"name":"h"},"spec":{"clusterIP":"None","selector":{"b":"2","a":"1"},"ports":[{"port":53,"protocol":"UDP"}]}}`,
			"h ClusterIP None <none> 53/UDP <unknown> a=1,b=2"},
		{"deployment", "deployments",
			fmt.Sprintf(`{"metadata":{"name":"d"},"spec":{"replicas":%d,"selector":{"matchLabels":{"app":"d"}},"template":{"spec":{"containers":[{"name":"a","image":"i:1"},{"name":"b","image":"j:2"}]}}},"status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}`, three),
			"d 2/3 3 2 <unknown> a,b i:1,j:2 app=d"},
		{"endpointslice with more", "endpointslices",
			fmt.Sprintf(`{"metadata":{"name":"s"},"addressType":"IPv4","ports":[{"port":%d}],"endpoints":[{"addresses":["1.1.1.1"]},{"addresses":["1.1.1.2"]},{"addresses":["1.1.1.3"]},{"addresses":["1.1.1.4"]},{"addresses":["1.1.1.5"]}]}`, port),
			"s IPv4 9090 1.1.1.1,1.1.1.2,1.1.1.3 + 2 more... <unknown>"},
		{"endpointslice empty", "endpointslices", `{"metadata":{"name":"e"},"addressType":"IPv4","ports":null,"endpoints":null}`,
			"e IPv4 <unset> <unset> <unknown>"}, // kubectl's formatDiscoveryPorts: no ports is <unset>
		{"node not ready, cordoned, roles", "nodes",
			`{"metadata":{"name":"n","labels":{"node-role.kubernetes.io/control-plane":"","node-role.kubernetes.io/worker":""}},"spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"False"}],"nodeInfo":{"kubeletVersion":"v1"}}}`,
			"n NotReady,SchedulingDisabled control-plane,worker <unknown> v1 <none> <none> <unknown> <unknown> <unknown>"},
		{"event", "events",
			`{"metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"web-1"},"type":"Warning","reason":"BackOff","message":"back-off\n","lastTimestamp":"` + created.Format(time.RFC3339) + `"}`,
			// LAST SEEN TYPE REASON OBJECT, (wide) SUBOBJECT SOURCE, MESSAGE,
			// (wide) FIRST SEEN COUNT NAME: the server's Table columns
			"90s Warning BackOff pod/web-1   back-off <unknown> 1 e1"},
		{"unknown resource gets NAME AGE", "leasesx", `{"metadata":{"name":"x"}}`, "x <unknown>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := &api.ResourceInfo{Resource: tc.resource}
			rs, err := clientRows(info, []json.RawMessage{json.RawMessage(tc.obj)}, now)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rs.rows[0].cells, " "); got != tc.want {
				t.Fatalf("row = %q\nwant  %q", got, tc.want)
			}
			if len(rs.rows[0].cells) != len(rs.columns) {
				t.Fatalf("%d cells for %d columns", len(rs.rows[0].cells), len(rs.columns))
			}
		})
	}
}

func TestRowsFromTable(t *testing.T) {
	tbl := &Table{
		ColumnDefinitions: []TableColumn{{Name: "Name", Format: "name"}, {Name: "Ready"}, {Name: "IP", Priority: 1}, {Name: "Age"}},
		Rows: []TableRow{{Cells: []any{"web", "1/1", "10.0.0.1", "5m"},
			Object: []byte(`{"kind":"PartialObjectMetadata","metadata":{"name":"web","namespace":"prod","labels":{"app":"web"}}}`)}},
	}
	rs := rowsFromTable(tbl)
	info := &api.ResourceInfo{Kind: "Pod", Resource: "pods"}
	for _, tc := range []struct {
		name   string
		opts   printOptions
		header string
		row    string
	}{
		{"plain", printOptions{}, "NAME READY AGE", "web 1/1 5m"},
		{"wide", printOptions{wide: true}, "NAME READY IP AGE", "web 1/1 10.0.0.1 5m"},
		{"namespace, kind, labels", printOptions{withNamespace: true, withKind: info, showLabels: true, labelColumns: []string{"app"}},
			"NAMESPACE NAME READY AGE APP LABELS", "prod pod/web 1/1 5m web app=web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, rows := rs.lines(tc.opts)
			if strings.Join(h, " ") != tc.header || strings.Join(rows[0], " ") != tc.row {
				t.Fatalf("header %q row %q", h, rows[0])
			}
		})
	}
}

func TestParseManifests(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  string
		names []string
		err   bool
	}{
		{"one yaml", "kind: A\nmetadata: {name: a}\n", []string{"a"}, false},
		{"multi-doc with empty and comment docs", "---\nkind: A\nmetadata: {name: a}\n--- # second\n# only a comment\n---\nkind: B\nmetadata: {name: b}\n...\n", []string{"a", "b"}, false},
		{"yaml list", "kind: List\nitems:\n- {kind: A, metadata: {name: a}}\n- {kind: B, metadata: {name: b}}\n", []string{"a", "b"}, false},
		{"json object", `{"kind":"A","metadata":{"name":"a"}}`, []string{"a"}, false},
		{"json stream", `{"kind":"A","metadata":{"name":"a"}} {"kind":"B","metadata":{"name":"b"}}`, []string{"a", "b"}, false},
		{"json array", `[{"kind":"A","metadata":{"name":"a"}},{"kind":"B","metadata":{"name":"b"}}]`, []string{"a", "b"}, false},
		{"json List", `{"kind":"ServiceList","items":[{"kind":"Service","metadata":{"name":"s"}}]}`, []string{"s"}, false},
		{"document separator in a string is not a split", "kind: A\nmetadata: {name: a}\ndata: |\n  ---x\n", []string{"a"}, false},
		{"bad yaml", "kind: [\n", nil, true},
		{"bad json", `{"kind":`, nil, true},
		{"not an object", "- a\n- b\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := parseManifests("f.yaml", []byte(tc.data))
			if tc.err {
				if err == nil {
					t.Fatalf("no error; got %v", ms)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range ms {
				names = append(names, str(m.obj, "metadata", "name"))
			}
			if strings.Join(names, ",") != strings.Join(tc.names, ",") {
				t.Fatalf("names %v, want %v", names, tc.names)
			}
		})
	}
}

func TestSplitChanges(t *testing.T) {
	for _, tc := range []struct {
		name          string
		args          []string
		res, set, rem string
		err           bool
	}{
		{"type name set", []string{"svc", "web", "a=1", "b="}, "svc web", "a=1,b=", "", false},
		{"type/name remove", []string{"svc/web", "a-"}, "svc/web", "", "a", false},
		{"value with equals", []string{"pod", "p", "x=a=b"}, "pod p", "x=a=b", "", false},
		{"change before resource", []string{"a=1", "svc", "web"}, "", "", "", true},
		{"set and remove same key", []string{"svc", "w", "a=1", "a-"}, "", "", "", true},
		{"empty key", []string{"svc", "w", "=1"}, "", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, set, rem, err := splitChanges(tc.args)
			if tc.err {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(res, " ") != tc.res || joinMap(set, "=", ",") != tc.set || strings.Join(rem, ",") != tc.rem {
				t.Fatalf("got %v %v %v", res, set, rem)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	invalid := client.NewAPIError(422, api.StatusReasonInvalid, `Service "x" is invalid: spec.ports[0].port: Invalid value: 0: bad`)
	invalid.Status.Details = &api.StatusDetails{Name: "x", Kind: "Service", Causes: []api.StatusCause{{Field: "spec.ports[0].port", Message: "spec.ports[0].port: Invalid value: 0: bad"}}}
	k8sStyle := client.NewAPIError(422, api.StatusReasonInvalid, "...")
	k8sStyle.Status.Details = &api.StatusDetails{Name: "d", Kind: "Deployment", Causes: []api.StatusCause{
		{Field: "spec.replicas", Message: "Invalid value: -1: must be >= 0"}, {Field: "spec.selector", Message: "Required value"}}}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"not found", fmt.Errorf("GET /x: %w", client.NewAPIError(404, api.StatusReasonNotFound, `services "x" not found`)), `Error from server (NotFound): services "x" not found`},
		{"no reason", client.NewAPIError(418, "", "teapot"), "Error from server: teapot"},
		{"unauthorized", client.NewAPIError(401, api.StatusReasonUnauthorized, "Unauthorized"), "error: You must be logged in to the server (Unauthorized)"},
		{"invalid, one cause", invalid, `The Service "x" is invalid: spec.ports[0].port: Invalid value: 0: bad`},
		{"invalid, kubernetes-style causes", k8sStyle, "The Deployment \"d\" is invalid: \n* spec.replicas: Invalid value: -1: must be >= 0\n* spec.selector: Required value"},
		{"refused", &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api", Err: syscall.ECONNREFUSED}, "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?"},
		{"other transport error", &url.Error{Op: "Get", URL: "https://h:1/", Err: errors.New("tls: bad certificate")}, "Unable to connect to the server: tls: bad certificate"},
		{"client side", errors.New("something"), "error: something"},
		{"client package prefix", errors.New("client: invalid request: empty name"), "error: invalid request: empty name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorText(tc.err); got != tc.want {
				t.Fatalf("errorText = %q\nwant        %q", got, tc.want)
			}
		})
	}
	var b strings.Builder
	if code := PrintError(&b, &ExitError{Code: 3}); code != 3 || b.String() != "" {
		t.Fatalf("silent ExitError: %d %q", code, b.String())
	}
	if code := PrintError(&b, nil); code != 0 {
		t.Fatalf("nil error: %d", code)
	}
}

func TestResolve(t *testing.T) {
	s := &session{resources: api.Resources()}
	for _, tc := range []struct {
		name, want string
	}{
		{"svc", "services"}, {"Service", "services"}, {"services", "services"}, {"po", "pods"}, {"deploy", "deployments"},
		{"deployments.apps", "deployments"}, {"deploy.v1.apps", "deployments"}, {"sts", "statefulsets"}, {"ns", "namespaces"},
		{"no", "nodes"}, {"ev", "events"}, {"endpointslices", "endpointslices"}, {"endpointslice.discovery.k8s.io", "endpointslices"},
		{"ep", "endpoints"}, {"pods.v1", "pods"},
	} {
		info, err := s.resolve(tc.name)
		if err != nil || info.Resource != tc.want {
			t.Errorf("resolve(%q) = %v, %v; want %s", tc.name, info, err, tc.want)
		}
	}
	for _, bad := range []string{"widgets", "deployments.core", "svc.apps"} {
		if _, err := s.resolve(bad); err == nil {
			t.Errorf("resolve(%q) succeeded", bad)
		}
	}
	// ep is the served core/v1 resource.
	if info, err := s.resolve("ep"); err != nil || info.New == nil || info.Kind != "Endpoints" || info.Group != "" {
		t.Errorf("resolve(ep) = %v, %v; want the served resource", info, err)
	}
}

func TestSmartLabel(t *testing.T) {
	for in, want := range map[string]string{"clusterIP": "Cluster IP", "spec": "Spec", "podCIDRs": "Pod CIDRs", "cidrs": "Cidrs", "parentRef": "Parent Ref", "loadBalancerIP": "Load Balancer IP", "IPAddress": "IP Address"} {
		if got := smartLabel(in); got != want {
			t.Errorf("smartLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDeploymentStatusMessages(t *testing.T) {
	three := int32(3)
	d := func(gen, observed int64, replicas, updated, available int32, cond string) *api.Deployment {
		x := &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web", Generation: gen}}
		x.Spec.Replicas = &three
		x.Status = api.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated, AvailableReplicas: available}
		if cond != "" {
			x.Status.Conditions = []api.DeploymentCondition{{Type: api.DeploymentProgressing, Reason: cond}}
		}
		return x
	}
	for _, tc := range []struct {
		name string
		d    *api.Deployment
		msg  string
		done bool
		err  string
	}{
		{"not observed", d(2, 1, 3, 3, 3, ""), "Waiting for deployment spec update to be observed...\n", false, ""},
		{"updating", d(2, 2, 4, 1, 3, ""), "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n", false, ""},
		{"old pending", d(2, 2, 4, 3, 3, ""), "Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination...\n", false, ""},
		{"available", d(2, 2, 3, 3, 2, ""), "Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available...\n", false, ""},
		{"done", d(2, 2, 3, 3, 3, ""), "deployment \"web\" successfully rolled out\n", true, ""},
		{"deadline", d(2, 2, 3, 1, 1, "ProgressDeadlineExceeded"), "", false, `deployment "web" exceeded its progress deadline`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, done, err := deploymentStatus(tc.d)
			if msg != tc.msg || done != tc.done || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Fatalf("got %q %v %v", msg, done, err)
			}
		})
	}
}
