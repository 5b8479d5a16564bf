package kubectl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/kubectl"
	"github.com/skiff-dev/skiff/server/servertest"
)

// One control plane serves every test of the package (each test works in
// a namespace of its own): it is started on first use and stopped by
// TestMain.
var (
	shared struct {
		once    sync.Once
		err     error
		ts      *servertest.Server
		dataDir string
		c       *client.Client
	}
	resources    = api.Resources()
	resPods      = api.Lookup(resources, "v1", "pods")
	resNodes     = api.Lookup(resources, "v1", "nodes")
	resNS        = api.Lookup(resources, "v1", "namespaces")
	resSvc       = api.Lookup(resources, "v1", "services")
	resDeploy    = api.Lookup(resources, "apps/v1", "deployments")
	resSlices    = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
	resEndpoints = api.Lookup(resources, "v1", "endpoints")
)

// nodeName is the Ready node the tests create so that the scheduler binds
// pods; the tests play its agent (kubelet).
const nodeName = "node-1"

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.ts != nil {
		if err := shared.ts.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// cluster starts the shared control plane (with a Ready node) once.
func cluster(t *testing.T) (*servertest.Server, *client.Client) {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shared.ts, shared.err = servertest.New(ctx, servertest.Options{
			Config: func(cfg *config.Server) { cfg.NodeMonitorGracePeriod = time.Hour },
		})
		if shared.err != nil {
			return
		}
		shared.dataDir, shared.c = shared.ts.DataDir(), shared.ts.Client()
		shared.err = createReadyNode(ctx, shared.c)
	})
	if shared.err != nil {
		t.Fatalf("control plane: %v", shared.err)
	}
	return shared.ts, shared.c
}

func createReadyNode(ctx context.Context, c *client.Client) error {
	now := api.Now()
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: nodeName, Labels: map[string]string{"kubernetes.io/hostname": nodeName}}}
	n.Spec.PodCIDR = "10.244.1.0/24"
	if err := c.Create(ctx, resNodes, "", n); err != nil {
		return err
	}
	n.Status = api.NodeStatus{
		Conditions:  []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KubeletReady", Message: "test agent"}},
		Addresses:   []api.NodeAddress{{Type: api.NodeInternalIP, Address: "192.168.1.10"}, {Type: api.NodeHostName, Address: nodeName}},
		Capacity:    api.ResourceList{"cpu": "64", "memory": "256Gi", "pods": "500"},
		Allocatable: api.ResourceList{"cpu": "64", "memory": "256Gi", "pods": "500"},
		NodeInfo:    api.NodeSystemInfo{KubeletVersion: "v1.31.0-skiff", OSImage: "Debian", KernelVersion: "6.1", ContainerRuntimeVersion: "process://1", OperatingSystem: "linux", Architecture: "amd64"},
	}
	return c.UpdateStatus(ctx, resNodes, "", n)
}

// harness runs skiff commands in one namespace of the shared cluster.
type harness struct {
	t          *testing.T
	c          *client.Client
	ns         string
	kubeconfig string
	env        map[string]string
	now        func() time.Time
}

var nsCounter struct {
	sync.Mutex
	n int
}

// newHarness makes a namespace for the test and a kubeconfig whose
// context points at it.
func newHarness(t *testing.T) *harness {
	t.Helper()
	_, c := cluster(t)
	nsCounter.Lock()
	nsCounter.n++
	ns := fmt.Sprintf("t%d-%s", nsCounter.n, strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-")))
	nsCounter.Unlock()
	if len(ns) > 60 {
		ns = strings.TrimRight(ns[:60], "-")
	}
	ctx := context.Background()
	if err := c.Create(ctx, resNS, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), resNS, "", ns, client.DeleteOptions{}) })
	h := &harness{t: t, c: c, ns: ns, env: map[string]string{}}
	h.kubeconfig = h.writeKubeconfig(ns)
	h.env["KUBECONFIG"] = h.kubeconfig
	return h
}

// writeKubeconfig copies the admin kubeconfig with the context's
// namespace set.
func (h *harness) writeKubeconfig(ns string) string {
	h.t.Helper()
	data, err := os.ReadFile(shared.ts.Kubeconfig())
	if err != nil {
		h.t.Fatal(err)
	}
	var kc map[string]any
	if err := yaml.Unmarshal(data, &kc); err != nil {
		h.t.Fatal(err)
	}
	for _, c := range kc["contexts"].([]any) {
		c.(map[string]any)["context"].(map[string]any)["namespace"] = ns
	}
	out, err := yaml.Marshal(kc)
	if err != nil {
		h.t.Fatal(err)
	}
	p := filepath.Join(h.t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, out, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// result is one command's outcome.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// syncBuffer is a buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// run executes `skiff args...` in-process through the real root command.
func (h *harness) run(args ...string) result {
	h.t.Helper()
	return h.runIn(context.Background(), "", args...)
}

// runIn executes a command with stdin and a context.
func (h *harness) runIn(ctx context.Context, stdin string, args ...string) result {
	h.t.Helper()
	var out, errOut syncBuffer
	r := h.start(ctx, stdin, &out, &errOut, args...)
	code := <-r
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// start runs a command in the background; the channel yields its exit
// status.
func (h *harness) start(ctx context.Context, stdin string, out, errOut *syncBuffer, args ...string) <-chan int {
	env := kubectl.Env{
		In:     strings.NewReader(stdin),
		Out:    out,
		ErrOut: errOut,
		Getenv: func(k string) string { return h.env[k] },
		Now:    h.now,
	}
	root := cli.NewRootWith(cli.Runners{Server: func(context.Context, config.Server) error {
		return fmt.Errorf("server runner called")
	}}, env)
	root.SetArgs(args)
	done := make(chan int, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		done <- kubectl.PrintError(errOut, err)
	}()
	return done
}

// ok runs a command that must succeed and returns its stdout.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	r := h.run(args...)
	if r.code != 0 {
		h.t.Fatalf("skiff %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// fails runs a command that must fail with code and stderr text.
func (h *harness) fails(code int, wantStderr string, args ...string) result {
	h.t.Helper()
	r := h.run(args...)
	if r.code != code || !strings.Contains(r.stderr, wantStderr) {
		h.t.Fatalf("skiff %s: want exit %d and stderr containing %q, got %s", strings.Join(args, " "), code, wantStderr, r)
	}
	return r
}

// writeFile writes a file in a temp dir and returns its path.
func (h *harness) writeFile(name, content string) string {
	h.t.Helper()
	dir := h.t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// lines splits output into lines of whitespace-separated fields.
func table(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

// checkColumns checks that out is a table whose header is want, with
// kubectl's layout: columns start where the header's do.
func checkColumns(t *testing.T, out string, want ...string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 {
		t.Fatalf("no output")
	}
	header := lines[0]
	var got []string
	var starts []int
	for i := 0; i < len(header); {
		if header[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(header) && !(header[j] == ' ' && (j+1 >= len(header) || header[j+1] == ' ')) {
			j++
		}
		got = append(got, header[i:j])
		starts = append(starts, i)
		i = j
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("header = %q, want %q\n%s", got, want, out)
	}
	var rows [][]string
	for _, l := range lines[1:] {
		var cells []string
		for k, s := range starts {
			end := len(l)
			if k+1 < len(starts) {
				end = min(starts[k+1], len(l))
			}
			if s > len(l) {
				cells = append(cells, "")
				continue
			}
			if k > 0 && s > 0 && l[s-1] != ' ' {
				t.Fatalf("column %s of %q does not start at %d:\n%s", want[k], l, s, out)
			}
			cells = append(cells, strings.TrimSpace(l[s:end]))
		}
		rows = append(rows, cells)
	}
	return rows
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s: %s", what, last)
}

// kubelet plays the node agent for the pods of one namespace: pods bound
// to a node become Running and Ready with an IP; pods with restartPolicy
// Never then succeed (or fail with exit code 3 when labelled
// test/exit=fail); terminating pods are removed.
func (h *harness) kubelet() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	h.t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		ip := 10
		for ctx.Err() == nil {
			var list api.PodList
			if err := h.c.List(ctx, resPods, h.ns, client.ListOptions{}, &list); err == nil {
				for i := range list.Items {
					p := &list.Items[i]
					if p.DeletionTimestamp != nil {
						zero := int64(0)
						_ = h.c.Delete(ctx, resPods, h.ns, p.Name, client.DeleteOptions{GracePeriodSeconds: &zero})
						continue
					}
					if p.Spec.NodeName == "" || p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed {
						continue
					}
					now := api.Now()
					switch {
					case p.Status.Phase != api.PodRunning:
						ip++
						p.Status.Phase = api.PodRunning
						p.Status.PodIP = fmt.Sprintf("10.244.1.%d", ip)
						p.Status.PodIPs = []api.PodIP{{IP: p.Status.PodIP}}
						p.Status.HostIP = "192.168.1.10"
						p.Status.StartTime = &now
						p.Status.Conditions = []api.PodCondition{
							{Type: api.PodScheduled, Status: api.ConditionTrue, LastTransitionTime: now},
							{Type: api.PodInitialized, Status: api.ConditionTrue, LastTransitionTime: now},
							{Type: api.ContainersReady, Status: api.ConditionTrue, LastTransitionTime: now},
							{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: now},
						}
						p.Status.ContainerStatuses = nil
						for _, c := range p.Spec.Containers {
							p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, api.ContainerStatus{
								Name: c.Name, Image: c.Image, Ready: true, State: api.ContainerState{Running: &api.ContainerStateRunning{StartedAt: now}},
							})
						}
					case p.Spec.RestartPolicy == api.RestartPolicyNever:
						code := int32(0)
						p.Status.Phase = api.PodSucceeded
						if p.Labels["test/exit"] == "fail" {
							code = 3
							p.Status.Phase = api.PodFailed
						}
						for j := range p.Status.ContainerStatuses {
							cs := &p.Status.ContainerStatuses[j]
							cs.Ready = false
							cs.State = api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: code, Reason: map[bool]string{true: "Completed", false: "Error"}[code == 0], FinishedAt: now}}
						}
					default:
						continue
					}
					_ = h.c.UpdateStatus(ctx, resPods, h.ns, p)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
}

// getJSON reads an object through the client.
func (h *harness) getObj(info *api.ResourceInfo, name string, into api.Object) {
	h.t.Helper()
	ns := h.ns
	if !info.Namespaced {
		ns = ""
	}
	if err := h.c.Get(context.Background(), info, ns, name, into); err != nil {
		h.t.Fatalf("get %s %s: %v", info.Resource, name, err)
	}
}

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return m
}

var listAll = client.ListOptions{}

// sliceFor writes an EndpointSlice of a service with ready endpoints.
func sliceFor(t *testing.T, h *harness, name, service string, port int32, addrs ...string) *api.EndpointSlice {
	t.Helper()
	ready := true
	proto := api.ProtocolTCP
	portName := ""
	s := &api.EndpointSlice{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: h.ns, Labels: map[string]string{
			api.LabelServiceName: service, api.LabelManagedBy: "kubectl-test"}},
		AddressType: api.AddressTypeIPv4,
		Ports:       []api.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
	}
	for _, a := range addrs {
		node := nodeName
		s.Endpoints = append(s.Endpoints, api.Endpoint{Addresses: []string{a}, Conditions: api.EndpointConditions{Ready: &ready}, NodeName: &node})
	}
	if err := h.c.Create(context.Background(), resSlices, h.ns, s); err != nil {
		t.Fatalf("create slice: %v", err)
	}
	return s
}

// with is h for a subtest: failures stop the subtest.
func (h *harness) with(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}
