package server_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resEndpoints = api.Lookup(resources, "v1", "endpoints")
	resEPSlices  = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
	resPodsEP    = api.Lookup(resources, "v1", "pods")
	resSvcsEP    = api.Lookup(resources, "v1", "services")
)

const kubectlPath = "/usr/bin/kubectl"

// endpointsKubectl runs the real kubectl against ts with its admin
// kubeconfig; it skips the test when kubectl is not installed.
func endpointsKubectl(t *testing.T, ts *servertest.Server, args ...string) string {
	t.Helper()
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Skip("no " + kubectlPath)
	}
	home := t.TempDir()
	cmd := exec.CommandContext(ctxT(t, 20*time.Second), kubectlPath, append([]string{"--kubeconfig", ts.Kubeconfig()}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBECACHEDIR="+home+"/cache")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// endpointsReadyPod creates a bound pod and gives it an IP and the Ready
// condition, as a node agent would.
func endpointsReadyPod(t *testing.T, c *client.Client, name, ip string, ready bool) {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	pod := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: api.PodSpec{NodeName: "node-a", Containers: []api.Container{{Name: "c", Image: "busybox",
			Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
	}
	if err := c.Create(ctx, resPodsEP, "default", pod); err != nil {
		t.Fatal(err)
	}
	status := api.ConditionFalse
	if ready {
		status = api.ConditionTrue
	}
	pod.Status = api.PodStatus{Phase: api.PodRunning, PodIP: ip, PodIPs: []api.PodIP{{IP: ip}},
		Conditions: []api.PodCondition{{Type: api.PodReady, Status: status, LastTransitionTime: api.Now()}}}
	if err := c.UpdateStatus(ctx, resPodsEP, "default", pod); err != nil {
		t.Fatal(err)
	}
}

func TestEndpointsWithKubectl(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{DisabledControllers: []string{"scheduler", "nodelifecycle"}})
	c := ts.Client()
	ctx := ctxT(t, 20*time.Second)
	web := &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "web"},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromString("http")}}},
	}
	if err := c.Create(ctx, resSvcsEP, "default", web); err != nil {
		t.Fatal(err)
	}
	for i, ip := range []string{"10.244.0.5", "10.244.0.6", "10.244.0.7", "10.244.0.8"} {
		endpointsReadyPod(t, c, fmt.Sprintf("web-%d", i), ip, true)
	}
	endpointsReadyPod(t, c, "web-slow", "10.244.0.9", false)
	eventually(t, 10*time.Second, "the Endpoints of web", func() (bool, error) {
		var ep api.Endpoints
		if err := c.Get(ctx, resEndpoints, "default", "web", &ep); err != nil {
			return false, err
		}
		return len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == 4 && len(ep.Subsets[0].NotReadyAddresses) == 1, nil
	})

	out := endpointsKubectl(t, ts, "get", "ep", "web")
	if !regexp.MustCompile(`^NAME\s+ENDPOINTS\s+AGE\nweb\s+10\.244\.0\.5:8080,10\.244\.0\.6:8080,10\.244\.0\.7:8080 \+ 1 more\.\.\.\s+\d+s\n$`).MatchString(out) {
		t.Errorf("kubectl get ep web:\n%s", out)
	}
	// The kubernetes Service has its Endpoints too, as in Kubernetes.
	out = endpointsKubectl(t, ts, "get", "endpoints")
	if !strings.Contains(out, "\nweb ") {
		t.Errorf("kubectl get endpoints:\n%s", out)
	}

	// kubectl get all: the all category.
	out = endpointsKubectl(t, ts, "get", "all")
	for _, want := range []string{"pod/web-0", "service/web"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get all lacks %s:\n%s", want, out)
		}
	}
}

func TestSelectorlessServiceMirrored(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{DisabledControllers: []string{"scheduler", "nodelifecycle"}})
	c := ts.Client()
	ctx := ctxT(t, 20*time.Second)
	db := &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "db"},
		Spec:       api.ServiceSpec{Ports: []api.ServicePort{{Name: "pg", Port: 5432}}},
	}
	if err := c.Create(ctx, resSvcsEP, "default", db); err != nil {
		t.Fatal(err)
	}
	ep := &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "db"}, Subsets: []api.EndpointSubset{{
		Addresses: []api.EndpointAddress{{IP: "192.0.2.10"}, {IP: "192.0.2.11"}},
		Ports:     []api.EndpointsPort{{Name: "pg", Port: 5432}},
	}}}
	if err := c.Create(ctx, resEndpoints, "default", ep); err != nil {
		t.Fatal(err)
	}
	// A loopback address is refused, as Kubernetes refuses it.
	bad := &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "bad"}, Subsets: []api.EndpointSubset{{
		Addresses: []api.EndpointAddress{{IP: "127.0.0.1"}}}}}
	if err := c.Create(ctx, resEndpoints, "default", bad); err == nil || !strings.Contains(err.Error(), "subsets[0].addresses[0].ip") {
		t.Errorf("loopback Endpoints: %v", err)
	}

	var slice api.EndpointSlice
	eventually(t, 10*time.Second, "the mirrored EndpointSlice", func() (bool, error) {
		var l api.EndpointSliceList
		if err := c.List(ctx, resEPSlices, "default", client.ListOptions{LabelSelector: "kubernetes.io/service-name=db"}, &l); err != nil {
			return false, err
		}
		if len(l.Items) != 1 {
			return false, fmt.Errorf("%d slices", len(l.Items))
		}
		slice = l.Items[0]
		return len(slice.Endpoints) == 2, nil
	})
	if slice.Labels[api.LabelManagedBy] != "endpointslicemirroring-controller.k8s.io" || slice.AddressType != api.AddressTypeIPv4 ||
		len(slice.Ports) != 1 || *slice.Ports[0].Port != 5432 {
		t.Fatalf("slice %+v", slice)
	}
	// The endpoints controller left the user's Endpoints as written.
	var got api.Endpoints
	if err := c.Get(ctx, resEndpoints, "default", "db", &got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[api.LabelSkipMirror] != "" || len(got.Subsets[0].Addresses) != 2 {
		t.Fatalf("user Endpoints changed: %+v", got)
	}
	out := endpointsKubectl(t, ts, "get", "ep", "db")
	if !regexp.MustCompile(`\ndb\s+192\.0\.2\.10:5432,192\.0\.2\.11:5432\s+\d+s\n$`).MatchString(out) {
		t.Errorf("kubectl get ep db:\n%s", out)
	}
}
