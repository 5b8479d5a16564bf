package netagent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
)

// containerdExecCases are the exec cases of a container of the test image
// (the static workload at /workload and /bin/tar).
var containerdExecCases = []execCase{
	{name: "stdout, stderr", cmd: []string{"/workload", "out-err", "x"}, wantOut: "a line on stdout [x]\n", wantErr: "a line on stderr [x]\n"},
	{name: "exit code", cmd: []string{"/workload", "exit", "3"}, wantOut: "exiting with 3", wantCode: 3},
	{name: "stdin", cmd: []string{"/workload", "stdin-cat"}, stdin: "hello\nworld\n", wantOut: "hello\nworld\n"},
	{name: "tty and its size", cmd: []string{"/workload", "ttysize"}, stdin: "go\n", tty: true,
		size: &runtime.TerminalSize{Width: 123, Height: 45}, wantOut: "45 123\r\ntty"},
	{name: "tty exit code", cmd: []string{"/workload", "exit", "7"}, tty: true, wantCode: 7, wantOut: "exiting with 7"},
	{name: "command not found", cmd: []string{"/no-such-command"}, wantFailure: "no-such-command"},
}

// startContainerdNode starts an agent on the containerd runtime (its own
// containerd in a short data dir) with the node API on loopback, and
// imports the test image skiff.local/workload:test.
func startContainerdNode(t *testing.T, s *server.Server, name string) *containerd.Runtime {
	t.Helper()
	workload, skiff := requireContainerd(t)
	img := workloadImage("skiff.local/workload:test", workload)
	img.Files = append(img.Files, ociarchive.File{Path: "/bin/tar", Source: workload}, ociarchive.File{Path: "/data/hello.txt", Data: []byte("hello from the image\n")})
	dataDir, crt := managedContainerd(t, "skex", skiff, nil, img)
	rt, rtName := crt, "containerd"
	ns := netnstest.NewNode(t)
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: name, NodeIPs: nil, NodeAPIListen: "127.0.0.1:0",
		DataDir: dataDir, Runtime: rtName, DNSUpstreams: []string{},
		RelistPeriod: 200 * time.Millisecond, Logger: testLog(t),
	}
	startAgent(t, nil, cfg, netagent.Deps{Runtime: rt, NodeNetNS: ns.Do})
	return crt
}

func workloadPod(name string, args ...string) *api.Pod {
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "w", Image: "skiff.local/workload:test",
			ImagePullPolicy: api.PullNever, Args: args}}},
	}
}

// TestExecContainerd: exec and attach through the server to a remote
// agent on containerd (task.Exec with cio streams, a terminal and its
// resize); then bad or aborted execs leave nothing behind.
func TestExecContainerd(t *testing.T) {
	requireNode(t)
	ts := servertest.Start(t, servertest.Options{})
	s := ts.Server()
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	crt := startContainerdNode(t, s, "node-ctrd-exec")
	ctx := context.Background()
	for _, p := range []*api.Pod{workloadPod("execd", "netexec", "--http-port=8080", "--udp-port=-1"), workloadPod("ticker", "tick")} {
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	p := waitPod(t, admin, "execd", 60*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	waitPod(t, admin, "ticker", 60*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	e := newExecClient(t, s)
	checkExecCases(t, e, "execd", "", containerdExecCases)
	checkAttach(t, e, "ticker", "tick")
	checkCLI(t, ts.Kubeconfig(), "execd", "ticker", "/workload stdin-cat", "/data")
	checkAttachStdinContainerd(t, admin, e)
	// tar in the image, as kubectl cp runs it.
	r := e.run(t, "execd", "", []string{"tar", "cf", "-", "/data"}, nil, false, nil)
	if r.err != nil || r.code != 0 || !strings.Contains(r.stdout, "hello from the image") {
		t.Errorf("tar cf - /data: %+v", r)
	}

	_, id, _ := strings.Cut(p.Status.ContainerStatuses[0].ContainerID, "://")
	st, err := crt.Status(ctx, id)
	if err != nil || st.Pid == 0 {
		t.Fatalf("the container of execd: %+v %v", st, err)
	}
	cases := 100
	if testing.Short() {
		cases = 20
	}
	badInputs(t, e, "execd", "", []string{"/workload", "stdin-cat"}, cases, st.Pid, "pid")
	for _, name := range []string{"execd", "ticker"} {
		deletePodNow(t, admin, name)
	}
	eventually(t, 30*time.Second, "containers removed", func() (bool, error) {
		cs, err := crt.List(ctx)
		return err == nil && len(cs) == 0, err
	})
}

// checkAttachStdinContainerd: attach -i to containers started with stdin
// (the shim's FIFO), whose stdin outlives a session; stdinOnce closes it
// at the first session's end; tty: true gives a terminal its size.
func checkAttachStdinContainerd(t *testing.T, admin *client.Client, e *execClient) {
	t.Helper()
	ctx := context.Background()
	catd := workloadPod("catd", "stdin-cat")
	catd.Spec.Containers[0].Stdin = true
	once := workloadPod("oncecat", "stdin-once")
	once.Spec.Containers[0].Stdin, once.Spec.Containers[0].StdinOnce = true, true
	ttyd := workloadPod("ttyd", "ttysize")
	ttyd.Spec.Containers[0].Stdin, ttyd.Spec.Containers[0].TTY = true, true
	for _, p := range []*api.Pod{catd, once, ttyd} {
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
		waitPod(t, admin, p.Name, 60*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	}
	attachStdin(t, e, "catd", "hello\n", "hello\n", nil)
	attachStdin(t, e, "catd", "again\n", "again\n", nil)
	attachStdin(t, e, "oncecat", "one\n", "one\nstdin-closed\n", nil)
	attachStdin(t, e, "oncecat", "two\n", "", nil)
	attachStdin(t, e, "ttyd", "go\n", "45 123", &runtime.TerminalSize{Width: 123, Height: 45})
	for _, name := range []string{"catd", "oncecat", "ttyd"} {
		deletePodNow(t, admin, name)
	}
}
