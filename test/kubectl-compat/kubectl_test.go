package kubectlcompat

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: compute-node
  labels:
    app: compute-node
spec:
  replicas: %d
  selector:
    matchLabels:
      app: compute-node
  template:
    metadata:
      labels:
        app: compute-node
    spec:
      containers:
      - name: worker
        image: %s
        env:
        - name: MODE
          value: %s
        ports:
        - containerPort: 9090
          name: data
`

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// serverTable asks the server for a Table the way kubectl does.
func serverTable(t *testing.T, ns, resource, name string) metav1.Table {
	t.Helper()
	req := env.cs.CoreV1().RESTClient().Get().Namespace(ns).Resource(resource).Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	raw, err := req.DoRaw(ctx(t))
	if err != nil {
		t.Fatalf("table: %v", err)
	}
	var tb metav1.Table
	if err := json.Unmarshal(raw, &tb); err != nil {
		t.Fatalf("table %s: %v", raw, err)
	}
	return tb
}

func createService(t *testing.T, ns, name string, typ corev1.ServiceType) *corev1.Service {
	t.Helper()
	svc, err := env.cs.CoreV1().Services(ns).Create(ctx(t), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service: %v", err)
	}
	return svc
}

func TestGetServiceShowsTheServerColumns(t *testing.T) {
	ns := namespace(t, "get-svc")
	svc := createService(t, ns, "data-channel", corev1.ServiceTypeNodePort)
	out := kubectl(t, "get", "svc", "data-channel", "-n", ns)
	ls := lines(out)
	if len(ls) != 2 {
		t.Fatalf("output:\n%s", out)
	}
	tb := serverTable(t, ns, "services", "data-channel")
	var want []string
	for _, c := range tb.ColumnDefinitions {
		if c.Priority == 0 {
			want = append(want, strings.ToUpper(c.Name))
		}
	}
	if got := fields(ls[0]); strings.Join(got, " ") != "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE" || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("header %q, server columns %q", got, want)
	}
	row := fields(ls[1])
	wantRow := []string{"data-channel", "NodePort", svc.Spec.ClusterIP, "<none>", fmt.Sprintf("80:%d/TCP", svc.Spec.Ports[0].NodePort)}
	if len(row) != 6 || strings.Join(row[:5], " ") != strings.Join(wantRow, " ") {
		t.Errorf("row %q, want %q + AGE", row, wantRow)
	}
	for i, cell := range tb.Rows[0].Cells[:5] {
		if fmt.Sprint(cell) != row[i] {
			t.Errorf("kubectl cell %d %q, server %v", i, row[i], cell)
		}
	}

	wide := lines(kubectl(t, "get", "svc", "-n", ns, "-o", "wide"))
	if h := fields(wide[0]); h[len(h)-1] != "SELECTOR" || fields(wide[1])[6] != "app=data-channel" {
		t.Errorf("-o wide:\n%s", strings.Join(wide, "\n"))
	}

	// -A adds the NAMESPACE column from each row's PartialObjectMetadata.
	all := kubectl(t, "get", "svc", "-A")
	found := false
	for _, l := range lines(all)[1:] {
		if f := fields(l); f[0] == ns && f[1] == "data-channel" {
			found = true
		}
	}
	if !found || fields(lines(all)[0])[0] != "NAMESPACE" {
		t.Errorf("-A:\n%s", all)
	}

	_, errOut, err := kubectlErr(t, "get", "svc", "nope", "-n", ns)
	if err == nil || strings.TrimSpace(errOut) != `Error from server (NotFound): services "nope" not found` {
		t.Errorf("missing service: err %v, stderr %q", err, errOut)
	}
}

func TestGetEndpointSlicesAndOtherResources(t *testing.T) {
	ns := namespace(t, "get-eps")
	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "eps.yaml", `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: data-channel-abc
  labels:
    kubernetes.io/service-name: data-channel
    endpointslice.kubernetes.io/managed-by: test
addressType: IPv4
ports:
- name: data
  port: 9090
  protocol: TCP
endpoints:
- addresses: ["10.244.0.5"]
- addresses: ["10.244.0.6"]
- addresses: ["10.244.0.7"]
- addresses: ["10.244.0.8"]
`))
	out := lines(kubectl(t, "get", "endpointslices", "-n", ns, "-l", "kubernetes.io/service-name=data-channel"))
	if len(out) != 2 || strings.Join(fields(out[0]), " ") != "NAME ADDRESSTYPE PORTS ENDPOINTS AGE" {
		t.Fatalf("output:\n%s", strings.Join(out, "\n"))
	}
	row := fields(out[1])
	if strings.Join(row[:6], " ") != "data-channel-abc IPv4 9090 10.244.0.5,10.244.0.6,10.244.0.7 + 1" {
		t.Errorf("row %q", row)
	}

	for _, tc := range []struct{ args, header string }{
		{"get ns default", "NAME STATUS AGE"},
		{"get servicecidrs", "NAME CIDRS AGE"},
		{"get ipaddresses", "NAME PARENTREF"},
		{"get pc", "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY"},
		{"get leases -n kube-node-lease", ""},
		{"get po -n " + ns, ""},
		{"get deploy -n " + ns, ""},
		{"get sts -n " + ns, ""},
		{"get no", ""},
		{"get ev -n " + ns, ""},
	} {
		t.Run(tc.args, func(t *testing.T) {
			out, errOut, err := kubectlErr(t, strings.Fields(tc.args)...)
			if err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			if tc.header != "" && strings.Join(fields(lines(out)[0]), " ") != tc.header {
				t.Errorf("header of:\n%s", out)
			}
		})
	}
}

func TestApplyConfigureUnchangedAndDelete(t *testing.T) {
	ns := namespace(t, "apply")
	f := manifest(t, "d1.yaml", fmt.Sprintf(deploymentYAML, 2, "busybox:1", "a"))
	if out := kubectl(t, "apply", "-n", ns, "-f", f); strings.TrimSpace(out) != "deployment.apps/compute-node created" {
		t.Errorf("first apply: %q", out)
	}
	d, err := env.cs.AppsV1().Deployments(ns).Get(ctx(t), "compute-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Annotations["kubectl.kubernetes.io/last-applied-configuration"], `"image":"busybox:1"`) {
		t.Errorf("last-applied annotation: %q", d.Annotations)
	}

	if out := kubectl(t, "apply", "-n", ns, "-f", f); strings.TrimSpace(out) != "deployment.apps/compute-node unchanged" {
		t.Errorf("re-apply of the same file: %q", out)
	}

	// Something else adds a second env var and a label: the three-way
	// strategic merge keeps them while it changes what the file changed.
	patch := `{"metadata":{"labels":{"owner":"ops"}},"spec":{"template":{"spec":{"containers":[{"name":"worker","env":[{"name":"EXTRA","value":"1"}]}]}}}}`
	if _, err := env.cs.AppsV1().Deployments(ns).Patch(ctx(t), "compute-node", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	f2 := manifest(t, "d2.yaml", fmt.Sprintf(deploymentYAML, 3, "busybox:2", "b"))
	if out := kubectl(t, "apply", "-n", ns, "-f", f2); strings.TrimSpace(out) != "deployment.apps/compute-node configured" {
		t.Errorf("second apply: %q", out)
	}
	d, err = env.cs.AppsV1().Deployments(ns).Get(ctx(t), "compute-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers
	vars := map[string]string{}
	for _, e := range c[0].Env {
		vars[e.Name] = e.Value
	}
	if *d.Spec.Replicas != 3 || len(c) != 1 || c[0].Image != "busybox:2" || vars["MODE"] != "b" || vars["EXTRA"] != "1" ||
		d.Labels["owner"] != "ops" || len(c[0].Ports) != 1 || c[0].Ports[0].ContainerPort != 9090 {
		t.Errorf("after re-apply: replicas %d, containers %+v, labels %v", *d.Spec.Replicas, c, d.Labels)
	}

	// Dropping a port from the file removes it (by its merge key, port).
	svc := manifest(t, "svc.yaml", `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: https, port: 443, targetPort: 8443}
`)
	kubectl(t, "apply", "-n", ns, "-f", svc)
	svc2 := manifest(t, "svc2.yaml", `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: https, port: 443, targetPort: 9443}
`)
	if out := kubectl(t, "apply", "-n", ns, "-f", svc2); strings.TrimSpace(out) != "service/web configured" {
		t.Errorf("service re-apply: %q", out)
	}
	s, err := env.cs.CoreV1().Services(ns).Get(ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 443 || s.Spec.Ports[0].TargetPort.IntVal != 9443 {
		t.Errorf("ports after re-apply %+v", s.Spec.Ports)
	}

	out := kubectl(t, "delete", "-n", ns, "-f", f2)
	if !strings.Contains(out, `deployment.apps "compute-node" deleted`) {
		t.Errorf("delete -f: %q", out)
	}
	if _, err := env.cs.AppsV1().Deployments(ns).Get(ctx(t), "compute-node", metav1.GetOptions{}); err == nil {
		t.Error("deployment still there after delete -f")
	}
}

func TestScaleExposeAndJSONPath(t *testing.T) {
	ns := namespace(t, "scale")
	kubectl(t, "apply", "-n", ns, "-f", manifest(t, "d.yaml", fmt.Sprintf(deploymentYAML, 1, "busybox", "a")))
	if out := kubectl(t, "scale", "-n", ns, "deploy/compute-node", "--replicas=3"); strings.TrimSpace(out) != "deployment.apps/compute-node scaled" {
		t.Errorf("scale: %q", out)
	}
	d, err := env.cs.AppsV1().Deployments(ns).Get(ctx(t), "compute-node", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 3 {
		t.Fatalf("replicas after scale: %v %v", d.Spec.Replicas, err)
	}

	if out := kubectl(t, "expose", "-n", ns, "deployment", "compute-node", "--port=80", "--target-port=9090"); strings.TrimSpace(out) != "service/compute-node exposed" {
		t.Errorf("expose: %q", out)
	}
	svc, err := env.cs.CoreV1().Services(ns).Get(ctx(t), "compute-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector["app"] != "compute-node" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 ||
		svc.Spec.Ports[0].TargetPort.IntVal != 9090 || svc.Spec.ClusterIP == "" {
		t.Errorf("exposed service %+v", svc.Spec)
	}
	if out := kubectl(t, "expose", "-n", ns, "deployment", "compute-node", "--name=data-channel", "--port=9090"); strings.TrimSpace(out) != "service/data-channel exposed" {
		t.Errorf("expose --name: %q", out)
	}

	ip := kubectl(t, "get", "svc", "compute-node", "-n", ns, "-o", "jsonpath={.spec.clusterIP}")
	if ip != svc.Spec.ClusterIP {
		t.Errorf("jsonpath %q, want %q", ip, svc.Spec.ClusterIP)
	}
	name := kubectl(t, "get", "svc", "-n", ns, "-o", "name", "--sort-by=.metadata.name")
	if strings.Join(lines(name), " ") != "service/compute-node service/data-channel" {
		t.Errorf("-o name: %q", name)
	}
	var got corev1.Service
	if err := json.Unmarshal([]byte(kubectl(t, "get", "svc", "compute-node", "-n", ns, "-o", "json")), &got); err != nil || got.Name != "compute-node" {
		t.Errorf("-o json: %v %+v", err, got.ObjectMeta)
	}
}

func TestGetWatchSeesChanges(t *testing.T) {
	ns := namespace(t, "watch")
	createService(t, ns, "first", corev1.ServiceTypeClusterIP)
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := kubectlCmd(c, "get", "svc", "-n", ns, "-w")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	got := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	expect := func(what string, match func([]string) bool) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-got:
				if !ok {
					t.Fatalf("kubectl get -w ended before %s; stderr: %s", what, stderr.String())
				}
				if match(fields(l)) {
					return
				}
			case <-timeout:
				t.Fatalf("no line for %s; stderr: %s", what, stderr.String())
			}
		}
	}
	expect("the header", func(f []string) bool { return strings.Join(f, " ") == "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE" })
	expect("the first service", func(f []string) bool { return f[0] == "first" })

	createService(t, ns, "second", corev1.ServiceTypeClusterIP)
	expect("the added service", func(f []string) bool { return f[0] == "second" && f[1] == "ClusterIP" })
	patch := `{"spec":{"type":"NodePort"}}`
	if _, err := env.cs.CoreV1().Services(ns).Patch(ctx(t), "second", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("the modified service", func(f []string) bool { return f[0] == "second" && f[1] == "NodePort" })
}

func TestExplainFromOpenAPI(t *testing.T) {
	// kubectl 1.27+ renders OpenAPI v3 ("FIELD: ports <[]ServicePort>");
	// older ones render v2 protobuf ("RESOURCE: ports <[]Object>").
	out := kubectl(t, "explain", "service.spec.ports")
	for _, want := range []string{`KIND:\s+Service\n`, `VERSION:\s+v1\n`, `(FIELD|RESOURCE): ports <\[\](ServicePort|Object)>`,
		"\n\\s+port\t<integer> -required-\n", "\n\\s+targetPort\t<"} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	out = kubectl(t, "explain", "deployment.spec.template.spec.containers.ports")
	if !regexp.MustCompile(`(GROUP:\s+apps|VERSION:\s+apps/v1)\n`).MatchString(out) || !strings.Contains(out, "containerPort\t<integer> -required-") {
		t.Errorf("explain deployment:\n%s", out)
	}
	if _, errOut, err := kubectlErr(t, "explain", "service.spec.nope"); err == nil || !strings.Contains(errOut, `field "nope" does not exist`) {
		t.Errorf("explain of a missing field: %v %s", err, errOut)
	}
}

func TestAPIResourcesListsShortNames(t *testing.T) {
	out := kubectl(t, "api-resources")
	want := map[string]string{"services": "svc", "pods": "po", "deployments": "deploy", "namespaces": "ns", "nodes": "no", "statefulsets": "sts"}
	seen := map[string]bool{}
	for _, l := range lines(out)[1:] {
		f := fields(l)
		if len(f) == 4 && f[1] == "metrics.k8s.io/v1beta1" { // NodeMetrics, PodMetrics: no short names, as upstream
			seen[f[3]] = true
			continue
		}
		if s, ok := want[f[0]]; ok {
			if f[1] != s {
				t.Errorf("%s short names %q, want %q", f[0], f[1], s)
			}
			seen[f[0]] = true
		}
		if f[0] == "endpointslices" {
			seen[f[0]] = true
		}
	}
	if len(seen) != len(want)+3 || !seen["NodeMetrics"] || !seen["PodMetrics"] {
		t.Errorf("api-resources:\n%s", out)
	}
	if out := kubectl(t, "api-versions"); !strings.Contains(out, "apps/v1") || !strings.Contains(out, "discovery.k8s.io/v1") {
		t.Errorf("api-versions:\n%s", out)
	}
}
