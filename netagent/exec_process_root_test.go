package netagent_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/remotecommand"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/server/servertest"
)

func shellPod(name, script string) *api.Pod {
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       api.PodSpec{Containers: []api.Container{{Name: "sh", Image: "none", Command: []string{"sh", "-c", script}}}},
	}
}

// processExecCases are the exec cases of a container of the process
// runtime (the host's sh, cat, stty).
var processExecCases = []execCase{
	{name: "stdout, stderr, exit code", cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, wantOut: "out\n", wantErr: "err\n", wantCode: 3},
	{name: "exit 0", cmd: []string{"true"}},
	{name: "stdin to cat", cmd: []string{"cat"}, stdin: "hello\nworld\n", wantOut: "hello\nworld\n"},
	{name: "the pod's view (hostname)", cmd: []string{"hostname"}, wantOut: "execd\n"},
	{name: "tty and its size", cmd: []string{"sh", "-c", "read l; stty size; test -t 0 && echo tty"}, stdin: "go\n", tty: true,
		size: &runtime.TerminalSize{Width: 123, Height: 45}, wantOut: "45 123"},
	{name: "tty exit code", cmd: []string{"sh", "-c", "exit 7"}, tty: true, wantCode: 7},
	{name: "command not found", cmd: []string{"no-such-command"}, wantFailure: "no-such-command"},
}

// TestExecProcessRuntime: exec and attach through the server to a remote
// agent's node API (pinned HTTPS, the upgrade spliced) on the process
// runtime; then 100 bad or aborted execs leave nothing behind.
func TestExecProcessRuntime(t *testing.T) {
	requireNode(t)
	ts := servertest.Start(t, servertest.Options{})
	s := ts.Server()
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	n := newNodeWith(t, s, "node-exec", func(n *node) { n.cfg.NodeAPIListen = "127.0.0.1:0" })
	ctx := context.Background()
	for _, p := range []*api.Pod{shellPod("execd", "exec sleep 3600"), shellPod("ticker", "while :; do echo tick; sleep 0.1; done")} {
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	p := waitPod(t, admin, "execd", 30*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	waitPod(t, admin, "ticker", 30*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	e := newExecClient(t, s)
	checkExecCases(t, e, "execd", "", processExecCases)
	checkAttach(t, e, "ticker", "tick")
	checkCLI(t, ts.Kubeconfig(), "execd", "ticker", "cat", t.TempDir())
	checkAttachStdin(t, admin, e)

	_, id, _ := strings.Cut(p.Status.ContainerStatuses[0].ContainerID, "://")
	st, err := n.rt.Status(ctx, id)
	if err != nil || st.Pid == 0 {
		t.Fatalf("the container of execd: %+v %v", st, err)
	}
	pid := st.Pid
	cases := 100
	if testing.Short() {
		cases = 20
	}
	badInputs(t, e, "execd", "", []string{"cat"}, cases, pid, "net")
	for _, name := range []string{"execd", "ticker"} {
		deletePodNow(t, admin, name)
	}
}

// TestExecBuiltinAgent: exec through the server's built-in agent, served
// in-process on the client's own connection.
func TestExecBuiltinAgent(t *testing.T) {
	requireNode(t)
	ns := netnstest.NewNode(t)
	ts := servertest.Start(t, servertest.Options{Agent: true, Logger: testLog(t), Config: func(cfg *config.Server) {
		cfg.AgentNetNS = ns.Path
		cfg.AgentNodeName = "server-node"
		cfg.NodeIP = []string{"192.0.2.20"}
		cfg.Runtime = "process"
		// An exec outlives --request-read-timeout (withLongRunning).
		cfg.RequestReadTimeout = time.Second
	}})
	s := ts.Server()
	select {
	case <-s.Agent().Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("built-in agent not Ready")
	}
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := admin.Create(ctx, resPods, "default", shellPod("execd", "exec sleep 3600")); err != nil {
		t.Fatal(err)
	}
	waitPod(t, admin, "execd", 30*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	e := newExecClient(t, s)
	checkExecCases(t, e, "execd", "sh", append(processExecCases[:4:4],
		execCase{name: "quiet longer than the read timeout", cmd: []string{"sh", "-c", "sleep 2; echo late"}, wantOut: "late\n"}))
	deletePodNow(t, admin, "execd")
	ts.Stop()
}

// checkAttach attaches to pod's output and waits for want.
func checkAttach(t *testing.T, e *execClient, pod, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := e.dial(ctx, pod, "attach", "", remotecommand.Options{Stdout: true, Stderr: true})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	w := &waitWriter{want: []byte(want), found: make(chan struct{})}
	done := make(chan struct{})
	go func() { _, _ = c.Run(nil, w, w); close(done) }()
	select {
	case <-w.found:
	case <-ctx.Done():
		t.Errorf("attach: %q not seen in %q", want, w.buf.String())
	}
	_ = c.Close()
	<-done
	// stdin is refused before the upgrade.
	if _, err := e.dial(ctx, pod, "attach", "", remotecommand.Options{Stdin: true, Stdout: true}); err == nil || !strings.Contains(err.Error(), "without stdin") {
		t.Errorf("attach -i: %v, want the 400 about stdin", err)
	}
}

// checkAttachStdin: attach -i writes into the stdin of a container started
// with stdin: true (a cat), which outlives the session; with stdinOnce
// the first session's end is the container's EOF.
func checkAttachStdin(t *testing.T, admin *client.Client, e *execClient) {
	t.Helper()
	ctx := context.Background()
	catd := shellPod("catd", "exec cat")
	catd.Spec.Containers[0].Stdin = true
	once := shellPod("oncecat", "cat; echo stdin-closed; exec sleep 3600")
	once.Spec.Containers[0].Stdin, once.Spec.Containers[0].StdinOnce = true, true
	for _, p := range []*api.Pod{catd, once} {
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
		waitPod(t, admin, p.Name, 30*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	}
	attach := func(pod, stdin, want string) { attachStdin(t, e, pod, stdin, want, nil) }
	// The stdin's end of one session is not the container's.
	attach("catd", "hello\n", "hello\n")
	attach("catd", "again\n", "again\n")
	attach("oncecat", "one\n", "one\nstdin-closed\n")
	// A later session's stdin goes nowhere; the container stays.
	attach("oncecat", "two\n", "")
	var p api.Pod
	if err := admin.Get(ctx, resPods, "default", "oncecat", &p); err != nil || p.Status.Phase != api.PodRunning {
		t.Errorf("oncecat after its stdin closed: %v %v", p.Status.Phase, err)
	}
	for _, name := range []string{"catd", "oncecat"} {
		deletePodNow(t, admin, name)
	}
}

// attachStdin attaches with stdin (and, with size, a terminal of that
// size) and waits for want in the output ("": sends stdin and leaves).
func attachStdin(t *testing.T, e *execClient, pod, stdin, want string, size *runtime.TerminalSize) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := e.dial(ctx, pod, "attach", "", remotecommand.Options{Stdin: true, Stdout: true, Stderr: size == nil, TTY: size != nil})
	if err != nil {
		t.Fatalf("attach -i %s: %v", pod, err)
	}
	if size != nil {
		if err := c.Resize(*size); err != nil {
			t.Fatal(err)
		}
	}
	w := &waitWriter{want: []byte(want), found: make(chan struct{})}
	if want == "" {
		ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond) // stdin sent, nothing to see
		defer cancel()
	}
	done := make(chan struct{})
	go func() { _, _ = c.Run(strings.NewReader(stdin), w, w); close(done) }()
	select {
	case <-w.found:
	case <-ctx.Done():
		if want != "" {
			t.Errorf("attach -i %s: %q not seen in %q", pod, want, w.buf.String())
		}
	}
	_ = c.Close()
	<-done
}

type waitWriter struct {
	buf   bytes.Buffer
	want  []byte
	found chan struct{}
	done  bool
}

func (w *waitWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if !w.done && bytes.Contains(w.buf.Bytes(), w.want) {
		w.done = true
		close(w.found)
	}
	return len(p), nil
}

// deletePodNow deletes a pod with grace 0 and waits until it is gone.
func deletePodNow(t *testing.T, c *client.Client, name string) {
	t.Helper()
	zero := int64(1)
	if err := c.Delete(context.Background(), resPods, "default", name, client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, name+" deleted", func() (bool, error) {
		var q api.Pod
		err := c.Get(context.Background(), resPods, "default", name, &q)
		return client.IsNotFound(err), err
	})
}
