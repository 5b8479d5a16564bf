package kubectl_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

const twoServices = `apiVersion: v1
kind: Service
metadata:
  name: front
  labels: {app: front, tier: web}
spec:
  selector: {app: front}
  ports:
  - {port: 80, targetPort: 8080}
---
apiVersion: v1
kind: Service
metadata:
  name: back
  labels: {app: back}
spec:
  type: NodePort
  selector: {app: back}
  ports:
  - {name: http, port: 8080}
  - {name: dns, port: 53, protocol: UDP}
`

var agePattern = regexp.MustCompile(`^([0-9]+[smhdy])+$`)

func TestGetTables(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("svcs.yaml", twoServices))

	t.Run("list with kubectl's columns", func(t *testing.T) {
		h := h.with(t)
		rows := checkColumns(t, h.ok("get", "services"), "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE")
		if len(rows) != 2 || rows[0][0] != "back" || rows[1][0] != "front" {
			t.Fatalf("rows %q", rows)
		}
		if rows[0][1] != "NodePort" || !regexp.MustCompile(`^8080:3[0-9]{4}/TCP,53:3[0-9]{4}/UDP$`).MatchString(rows[0][4]) {
			t.Fatalf("NodePort row %q", rows[0])
		}
		if !agePattern.MatchString(rows[1][5]) {
			t.Fatalf("AGE %q", rows[1][5])
		}
	})
	t.Run("short name, one name", func(t *testing.T) {
		h := h.with(t)
		rows := table(h.ok("get", "svc", "front"))
		if len(rows) != 2 || rows[1][0] != "front" || rows[1][4] != "80/TCP" {
			t.Fatalf("rows %q", rows)
		}
	})
	t.Run("TYPE/NAME and several names", func(t *testing.T) {
		h := h.with(t)
		rows := table(h.ok("get", "service/front", "svc/back"))
		if len(rows) != 3 || rows[1][0] != "front" || rows[2][0] != "back" {
			t.Fatalf("rows %q", rows)
		}
		rows = table(h.ok("get", "services", "back", "front"))
		if len(rows) != 3 || rows[1][0] != "back" || rows[2][0] != "front" {
			t.Fatalf("rows %q", rows)
		}
	})
	t.Run("label selector", func(t *testing.T) {
		h := h.with(t)
		rows := table(h.ok("get", "svc", "-l", "tier=web"))
		if len(rows) != 2 || rows[1][0] != "front" {
			t.Fatalf("rows %q", rows)
		}
		rows = table(h.ok("get", "svc", "-l", "app in (front,back),tier!=web"))
		if len(rows) != 2 || rows[1][0] != "back" {
			t.Fatalf("rows %q", rows)
		}
	})
	t.Run("field selector", func(t *testing.T) {
		h := h.with(t)
		rows := table(h.ok("get", "svc", "--field-selector", "metadata.name=back"))
		if len(rows) != 2 || rows[1][0] != "back" {
			t.Fatalf("rows %q", rows)
		}
	})
	t.Run("no headers, show labels, label columns", func(t *testing.T) {
		h := h.with(t)
		out := h.ok("get", "svc", "front", "--no-headers", "--show-labels", "-L", "tier")
		f := strings.Fields(out)
		if f[0] != "front" || f[len(f)-2] != "web" || f[len(f)-1] != "app=front,tier=web" {
			t.Fatalf("out %q", out)
		}
		rows := checkColumns(t, h.ok("get", "svc", "back", "-L", "tier,app"), "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "TIER", "APP")
		if rows[0][6] != "" || rows[0][7] != "back" {
			t.Fatalf("label columns %q", rows[0])
		}
	})
	t.Run("wide adds SELECTOR", func(t *testing.T) {
		h := h.with(t)
		rows := checkColumns(t, h.ok("get", "svc", "front", "-o", "wide"), "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR")
		if rows[0][6] != "app=front" {
			t.Fatalf("selector %q", rows[0][6])
		}
	})
	t.Run("all namespaces adds NAMESPACE", func(t *testing.T) {
		h := h.with(t)
		out := h.ok("get", "svc", "-A")
		rows := checkColumns(t, out, "NAMESPACE", "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE")
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r[0]+"/"+r[1]] = true
		}
		if !seen["default/kubernetes"] || !seen[h.ns+"/front"] {
			t.Fatalf("-A rows %q", rows)
		}
	})
	t.Run("several types prefix names with the kind", func(t *testing.T) {
		h := h.with(t)
		out := h.ok("get", "svc,deploy")
		if !strings.Contains(out, "service/front") || strings.Contains(out, "\n\n\n") {
			t.Fatalf("out %q", out)
		}
	})
	t.Run("sort by", func(t *testing.T) {
		h := h.with(t)
		rows := table(h.ok("get", "svc", "--sort-by=.spec.ports[0].port", "--no-headers"))
		if rows[0][0] != "front" || rows[1][0] != "back" {
			t.Fatalf("sorted %q", rows)
		}
	})
	t.Run("not found", func(t *testing.T) {
		h := h.with(t)
		r := h.fails(1, `Error from server (NotFound): services "nope" not found`, "get", "svc", "nope")
		if r.stdout != "" {
			t.Fatalf("stdout %q", r.stdout)
		}
		// found names still print
		r = h.fails(1, `services "nope" not found`, "get", "svc", "front", "nope")
		if !strings.Contains(r.stdout, "front") {
			t.Fatalf("stdout %q", r.stdout)
		}
		if r := h.run("get", "svc", "nope", "--ignore-not-found"); r.code != 0 || r.stderr != "" {
			t.Fatalf("--ignore-not-found: %s", r)
		}
		h.fails(1, `Error from server (NotFound): deployments.apps "x" not found`, "get", "deploy/x")
	})
	t.Run("empty", func(t *testing.T) {
		h := h.with(t)
		r := h.run("get", "pods")
		if r.code != 0 || r.stdout != "" || r.stderr != "No resources found in "+h.ns+" namespace.\n" {
			t.Fatalf("empty: %s", r)
		}
	})
	t.Run("client-side errors", func(t *testing.T) {
		h := h.with(t)
		h.fails(1, `error: the server doesn't have a resource type "widgets"`, "get", "widgets")
		h.fails(1, "You must specify the type of resource to get", "get")
		h.fails(1, "error: unable to match a printer suitable for the output format \"toml\"", "get", "svc", "-o", "toml")
		h.fails(1, "error: there is no need to specify a resource type as a separate argument", "get", "svc", "svc/front")
		h.fails(1, "error: unknown flag: --bogus", "get", "svc", "--bogus")
		h.fails(1, "error: a resource cannot be retrieved by name across all namespaces", "get", "svc", "front", "-A")
	})
	t.Run("cluster-scoped and short names", func(t *testing.T) {
		h := h.with(t)
		rows := checkColumns(t, h.ok("get", "no"), "NAME", "STATUS", "ROLES", "AGE", "VERSION")
		if rows[0][0] != nodeName || rows[0][1] != "Ready" || rows[0][4] != "v1.31.0-skiff" {
			t.Fatalf("nodes %q", rows)
		}
		rows = checkColumns(t, h.ok("get", "ns", h.ns), "NAME", "STATUS", "AGE")
		if rows[0][1] != "Active" {
			t.Fatalf("ns %q", rows)
		}
	})
}

func TestGetOutputFormats(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("svcs.yaml", twoServices))

	m := mustJSON(t, h.ok("get", "svc", "front", "-o", "json"))
	if m["kind"] != "Service" || m["metadata"].(map[string]any)["name"] != "front" {
		t.Fatalf("json: %v", m)
	}
	out := h.ok("get", "svc", "-o", "json")
	if !strings.HasPrefix(out, "{\n    \"apiVersion\": \"v1\",\n    \"items\": [") {
		t.Fatalf("json list layout:\n%s", out)
	}
	m = mustJSON(t, out)
	items := m["items"].([]any)
	if m["kind"] != "List" || len(items) != 2 || items[0].(map[string]any)["kind"] != "Service" {
		t.Fatalf("json list: %v", m)
	}
	out = h.ok("get", "svc", "front", "-o", "yaml")
	if !strings.HasPrefix(out, "apiVersion: v1\nkind: Service\nmetadata:\n") || !strings.Contains(out, "  - port: 80\n") {
		t.Fatalf("yaml:\n%s", out)
	}
	if out := h.ok("get", "svc", "-o", "yaml"); !strings.HasPrefix(out, "apiVersion: v1\nitems:\n- apiVersion: v1\n") || !strings.HasSuffix(out, "kind: List\nmetadata:\n  resourceVersion: \"\"\n") {
		t.Fatalf("yaml list:\n%s", out)
	}
	if out := h.ok("get", "svc", "-o", "name"); out != "service/back\nservice/front\n" {
		t.Fatalf("name: %q", out)
	}
	if out := h.ok("get", "svc,deploy", "-o", "name"); out != "service/back\nservice/front\n" {
		t.Fatalf("name of two types: %q", out)
	}
	if out := h.ok("get", "svc", "-o", "jsonpath={.items[*].metadata.name}"); out != "back front" {
		t.Fatalf("jsonpath: %q", out)
	}
	if out := h.ok("get", "svc", "back", "-o", `jsonpath={range .spec.ports[*]}{.name}={.port}{"\n"}{end}`); out != "http=8080\ndns=53\n" {
		t.Fatalf("jsonpath range: %q", out)
	}
	if out := h.ok("get", "svc", "-o", `jsonpath={.items[?(@.spec.type=="NodePort")].metadata.name}`); out != "back" {
		t.Fatalf("jsonpath filter: %q", out)
	}
	rows := checkColumns(t, h.ok("get", "svc", "-o", "custom-columns=NAME:.metadata.name,PORTS:.spec.ports[*].port"), "NAME", "PORTS")
	if rows[0][0] != "back" || rows[0][1] != "8080,53" || rows[1][1] != "80" {
		t.Fatalf("custom-columns %q", rows)
	}
	h.fails(1, "error parsing jsonpath", "get", "svc", "-o", "jsonpath={.items[}")
}

func TestGetPodsWide(t *testing.T) {
	h := newHarness(t)
	h.kubelet()
	h.ok("run", "web", "--image=nginx", "--labels=app=web")
	eventually(t, "pod running", 10*time.Second, func() (bool, string) {
		var p api.Pod
		h.getObj(resPods, "web", &p)
		return api.IsPodReady(&p), p.Status.Phase
	})
	rows := checkColumns(t, h.ok("get", "pods", "-o", "wide"), "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES")
	if rows[0][0] != "web" || rows[0][1] != "1/1" || rows[0][2] != "Running" || rows[0][3] != "0" ||
		!strings.HasPrefix(rows[0][5], "10.244.1.") || rows[0][6] != nodeName {
		t.Fatalf("pods -o wide %q", rows)
	}
	if out := h.ok("get", "po", "web", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"); out != "True" {
		t.Fatalf("ready jsonpath %q", out)
	}
}

// TestGetEndpoints: `get ep` lists the stored Endpoints objects as kubectl
// prints them (the first three ready ip:port, then "+ N more..."; not-ready
// addresses left out), not a view of the EndpointSlices, which `get
// endpointslices` keeps showing as slices.
func TestGetEndpoints(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	// A Service without a selector: the controllers leave its Endpoints
	// as written.
	if err := h.c.Create(ctx, resSvc, h.ns, &api.Service{ObjectMeta: api.ObjectMeta{Name: "ext"},
		Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 80}}}}); err != nil {
		t.Fatal(err)
	}
	addr := func(ips ...string) []api.EndpointAddress {
		var out []api.EndpointAddress
		for _, ip := range ips {
			out = append(out, api.EndpointAddress{IP: ip})
		}
		return out
	}
	ep := &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "ext"}, Subsets: []api.EndpointSubset{{
		Addresses:         addr("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"),
		NotReadyAddresses: addr("10.0.0.9"),
		Ports:             []api.EndpointsPort{{Port: 80}},
	}}}
	if err := h.c.Create(ctx, resEndpoints, h.ns, ep); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Create(ctx, resEndpoints, h.ns, &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "empty"}}); err != nil {
		t.Fatal(err)
	}
	// Slices of a Service without an Endpoints object: not in `get ep`.
	sliceFor(t, h, "api-1", "api", 8080, "10.244.1.1", "10.244.1.2")

	rows := checkColumns(t, h.ok("get", "ep"), "NAME", "ENDPOINTS", "AGE")
	got := map[string]string{}
	for _, r := range rows {
		got[r[0]] = r[1]
	}
	if got["ext"] != "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more..." || got["empty"] != "<none>" {
		t.Fatalf("ep rows %q", rows)
	}
	if _, ok := got["api"]; ok {
		t.Fatalf("get ep shows the slices of api: %q", rows)
	}
	for _, name := range []string{"endpoints", "Endpoints", "ep.v1"} {
		rows := checkColumns(t, h.ok("get", name, "ext"), "NAME", "ENDPOINTS", "AGE")
		if len(rows) != 1 || rows[0][1] != "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more..." {
			t.Fatalf("get %s ext: %q", name, rows)
		}
	}
	m := mustJSON(t, h.ok("get", "ep", "ext", "-o", "json"))
	if m["kind"] != "Endpoints" || len(m["subsets"].([]any)) != 1 {
		t.Fatalf("endpoints json %v", m)
	}
	h.fails(1, `Error from server (NotFound): endpoints "api" not found`, "get", "ep", "api")

	rows = checkColumns(t, h.ok("get", "endpointslices", "api-1"), "NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE")
	if len(rows) != 1 || rows[0][3] != "10.244.1.1,10.244.1.2" {
		t.Fatalf("endpointslices rows %q", rows)
	}
}

// TestGetWatch watches services, changes one and sees its new row.
func TestGetWatch(t *testing.T) {
	h := newHarness(t)
	h.ok("apply", "-f", h.writeFile("svcs.yaml", twoServices))
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := h.start(ctx, "", &out, &errOut, "get", "svc", "-w", "--output-watch-events")
	eventually(t, "the initial table", 10*time.Second, func() (bool, string) {
		return strings.Contains(out.String(), "front"), out.String()
	})
	h.ok("label", "svc", "front", "stage=2")
	h.ok("expose", "svc", "front", "--name=third", "--port=81")
	h.ok("delete", "svc", "back")
	eventually(t, "the watched changes", 10*time.Second, func() (bool, string) {
		s := out.String()
		return strings.Contains(s, "MODIFIED") && strings.Contains(s, "third") && strings.Contains(s, "DELETED"), s
	})
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("get -w exit %d: %s", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("get -w did not stop after its context ended")
	}
	// Rows after the table keep its column widths, widening them as
	// needed, as kubectl's remembered widths do.
	rows := table(out.String())
	if strings.Join(rows[0], " ") != "EVENT NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE" {
		t.Fatalf("header %q", rows[0])
	}
	var events []string
	for _, r := range rows[1:] {
		events = append(events, r[0]+" "+r[1])
	}
	got := strings.Join(events, ",")
	for _, want := range []string{"ADDED back", "ADDED front", "MODIFIED front", "ADDED third", "DELETED back"} {
		if !strings.Contains(got, want) {
			t.Fatalf("watch rows %q lack %q\n%s", got, want, out.String())
		}
	}

	// -w on one name with -o name
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var out2, err2 syncBuffer
	done = h.start(ctx, "", &out2, &err2, "get", "svc", "front", "-w", "-o", "name")
	eventually(t, "the first name", 10*time.Second, func() (bool, string) { return out2.String() == "service/front\n", out2.String() })
	h.ok("label", "svc", "front", "stage=3", "--overwrite")
	h.ok("label", "svc", "third", "stage=3", "--overwrite")
	eventually(t, "the change", 10*time.Second, func() (bool, string) {
		return out2.String() == "service/front\nservice/front\n", out2.String()
	})
	cancel()
	<-done
	if strings.Contains(out2.String(), "third") {
		t.Fatalf("watch of one name saw another: %q", out2.String())
	}
	h.fails(1, "watch is only supported on individual resources", "get", "svc", "a", "b", "-w")
	h.fails(1, `Error from server (NotFound): services "gone" not found`, "get", "svc", "gone", "-w")
}
