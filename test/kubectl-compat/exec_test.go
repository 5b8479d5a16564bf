package kubectlcompat

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/server/servertest"
)

// execCluster is a server of its own with its built-in agent on the
// process runtime (its network in a namespace the test made: root and the
// CNI plugins, else the test skips), running the pods "shell" (sleep) and
// "ticker" (a line every 100ms); it returns the kubeconfig.
func execCluster(t *testing.T) (kubeconfig string, cs *kubernetes.Clientset) {
	t.Helper()
	netnstest.RequireCNIPlugins(t)
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables (the portmap plugin runs it)")
	}
	ns := netnstest.NewNode(t)
	ts := servertest.Start(t, servertest.Options{Agent: true, Config: func(cfg *config.Server) {
		cfg.AgentNetNS = ns.Path
		cfg.AgentNodeName = "exec-node"
		cfg.NodeIP = []string{"192.0.2.30"}
		cfg.Runtime = "process"
	}})
	rc, err := clientcmd.BuildConfigFromFlags("", ts.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if cs, err = kubernetes.NewForConfig(rc); err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	for name, script := range map[string]string{"shell": "exec sleep 3600", "ticker": "while :; do echo tick; sleep 0.1; done"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Containers:                    []corev1.Container{{Name: "sh", Image: "none", Command: []string{"sh", "-c", script}}}}}
		if _, err := cs.CoreV1().Pods("default").Create(c, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(1))})
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{}); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	for _, name := range []string{"shell", "ticker"} {
		eventually(t, 30*time.Second, func() error {
			p, err := cs.CoreV1().Pods("default").Get(c, name, metav1.GetOptions{})
			if err == nil && p.Status.Phase != corev1.PodRunning {
				err = errors.New(name + " is " + string(p.Status.Phase))
			}
			return err
		})
	}
	return ts.Kubeconfig(), cs
}

// kubectlOn runs kubectl against kubeconfig with stdin; it returns
// stdout, stderr and the exit code.
func kubectlOn(t *testing.T, c context.Context, kubeconfig, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(c, env.kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+env.home, "KUBECACHEDIR="+filepath.Join(env.home, "cache-exec"))
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("kubectl %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

// spdyOnly: the Debian kubectl 1.20 pass (KUBECTL set), whose kubectl
// speaks only SPDY for exec, attach and cp.
func spdyOnly() bool { return os.Getenv("KUBECTL") != "" }

// TestKubectlExecCpAttach: kubectl exec (exit codes, stdin, a missing
// container), cp both ways and attach against a real agent: over
// WebSocket with the current kubectl, over SPDY with the Debian kubectl
// 1.20.
func TestKubectlExecCpAttach(t *testing.T) {
	kc, _ := execCluster(t)
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, errs, code := kubectlOn(t, c, kc, "", "exec", "shell", "--", "sh", "-c", "echo out; echo err >&2; exit 3"); code != 3 || out != "out\n" || !strings.Contains(errs, "err\n") || !strings.Contains(errs, "command terminated with exit code 3") {
		t.Errorf("exec exit 3: %d %q %q", code, out, errs)
	}
	if out, errs, code := kubectlOn(t, c, kc, "one\ntwo\n", "exec", "-i", "shell", "--", "cat"); code != 0 || out != "one\ntwo\n" {
		t.Errorf("exec -i cat: %d %q %q", code, out, errs)
	}
	if _, errs, code := kubectlOn(t, c, kc, "", "exec", "shell", "-c", "nope", "--", "true"); code == 0 || !strings.Contains(errs, "container nope is not valid for pod shell") {
		t.Errorf("exec -c nope: %d %q", code, errs)
	}
	if _, errs, code := kubectlOn(t, c, kc, "", "exec", "shell", "--", "no-such-command-y"); code == 0 || !strings.Contains(errs, "no-such-command-y") {
		t.Errorf("exec of a missing command: %d %q", code, errs)
	}
	// cp both ways: the process runtime's container sees the node's file
	// system (with the pod's mounts), so a temp dir of the test is a
	// directory of the container too.
	local, remote := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(local, "tree", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(local, "tree", "sub", "f.txt"), []byte("through tar\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := kubectlOn(t, c, kc, "", "cp", filepath.Join(local, "tree"), "shell:"+remote); code != 0 {
		t.Fatalf("cp to the pod: %d %q", code, errs)
	}
	if out, errs, code := kubectlOn(t, c, kc, "", "exec", "shell", "--", "cat", remote+"/tree/sub/f.txt"); code != 0 || out != "through tar\n" {
		t.Errorf("the copied file: %d %q %q", code, out, errs)
	}
	back := filepath.Join(local, "back")
	if _, errs, code := kubectlOn(t, c, kc, "", "cp", "shell:"+remote+"/tree", back); code != 0 {
		t.Fatalf("cp from the pod: %d %q", code, errs)
	}
	if b, err := os.ReadFile(filepath.Join(back, "sub", "f.txt")); err != nil || string(b) != "through tar\n" {
		t.Errorf("copied back: %q %v", b, err)
	}
	// attach: the container's output as it comes, until interrupted.
	ac, acancel := context.WithTimeout(c, 3*time.Second)
	defer acancel()
	if out, errs, _ := kubectlOn(t, ac, kc, "", "attach", "ticker"); !strings.Contains(out, "tick") {
		t.Errorf("attach: %q %q", out, errs)
	}
}

type fixedSize struct {
	sent bool
	sz   remotecommand.TerminalSize
}

func (f *fixedSize) Next() *remotecommand.TerminalSize {
	if f.sent {
		return nil
	}
	f.sent = true
	return &f.sz
}

// TestClientGoWebSocketExecutor: client-go's NewWebSocketExecutor (what
// kubectl 1.31+ uses) gets stdout, stderr, the exit code as
// exec.CodeExitError, stdin and a terminal with its size.
func TestClientGoWebSocketExecutor(t *testing.T) {
	if spdyOnly() {
		t.Skip("client-go is the same in both passes; run once, in the first")
	}
	kc, cs := execCluster(t)
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	run := func(cmd []string, stdin string, tty bool, size *fixedSize) (string, string, error) {
		req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("shell").SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: "sh", Command: cmd, Stdin: stdin != "", Stdout: true, Stderr: !tty, TTY: tty}, scheme.ParameterCodec)
		e, err := remotecommand.NewWebSocketExecutor(rc, "GET", req.URL().String())
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		o := remotecommand.StreamOptions{Stdout: &out, Tty: tty}
		if !tty {
			o.Stderr = &errb
		}
		if stdin != "" {
			o.Stdin = strings.NewReader(stdin)
		}
		if size != nil {
			o.TerminalSizeQueue = size
		}
		err = e.StreamWithContext(ctx(t), o)
		return out.String(), errb.String(), err
	}
	out, errs, err := run([]string{"sh", "-c", "echo out; echo err >&2; exit 5"}, "", false, nil)
	var ce utilexec.CodeExitError
	if !errors.As(err, &ce) || ce.Code != 5 || out != "out\n" || errs != "err\n" {
		t.Errorf("exit 5: %v %q %q", err, out, errs)
	}
	if out, _, err := run([]string{"cat"}, "stdin through v5\n", false, nil); err != nil || out != "stdin through v5\n" {
		t.Errorf("cat: %v %q", err, out)
	}
	if out, _, err := run([]string{"sh", "-c", `read l; for i in $(seq 50); do s=$(stty size); [ "$s" != "0 0" ] && break; sleep 0.1; done; echo "$s"`}, "go\n", true, &fixedSize{sz: remotecommand.TerminalSize{Width: 132, Height: 43}}); err != nil || !strings.Contains(out, "43 132") {
		t.Errorf("tty size: %v %q", err, out)
	}
	if _, _, err := run([]string{"no-such-command-z"}, "", false, nil); err == nil || !strings.Contains(err.Error(), "no-such-command-z") {
		t.Errorf("a missing command: %v", err)
	}
}
