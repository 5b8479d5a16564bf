package netagent_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/kubectl"

	"github.com/skiff-dev/skiff/netagent/remotecommand"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/server"
)

// execClient runs exec and attach through a server's pods/exec and
// pods/attach as the admin.
type execClient struct {
	base   string // wss://host:port
	token  string
	dialer *websocket.Dialer
}

func newExecClient(t testing.TB, s *server.Server) *execClient {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.Bundle().CACertPEM)
	return &execClient{
		base:   "wss" + strings.TrimPrefix(s.URL(), "https"),
		token:  s.Bundle().AdminToken,
		dialer: &websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: pool}, HandshakeTimeout: 10 * time.Second},
	}
}

func (e *execClient) dial(ctx context.Context, pod, sub, container string, o remotecommand.Options) (*remotecommand.Conn, error) {
	q := o.Query()
	if container != "" {
		q.Set("container", container)
	}
	u := e.base + "/api/v1/namespaces/default/pods/" + url.PathEscape(pod) + "/" + sub + "?" + q.Encode()
	return remotecommand.Dial(ctx, e.dialer, u, http.Header{"Authorization": {"Bearer " + e.token}})
}

// execResult is what one exec got back.
type execResult struct {
	stdout, stderr string
	code           int
	err            error
}

// run execs cmd with stdin (nil: none), and with tty, sending size first.
func (e *execClient) run(t testing.TB, pod, container string, cmd []string, stdin io.Reader, tty bool, size *runtime.TerminalSize) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := remotecommand.Options{Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: !tty, TTY: tty}
	c, err := e.dial(ctx, pod, "exec", container, o)
	if err != nil {
		return execResult{code: -1, err: err}
	}
	if size != nil {
		if err := c.Resize(*size); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	code, err := c.Run(stdin, &out, &errb)
	return execResult{out.String(), errb.String(), code, err}
}

// execCase is one exec and what it must give.
type execCase struct {
	name             string
	cmd              []string
	stdin            string
	tty              bool
	size             *runtime.TerminalSize
	wantOut, wantErr string // substrings
	wantCode         int
	wantFailure      string // a substring of the error; "" for none
}

func checkExecCases(t *testing.T, e *execClient, pod, container string, cases []execCase) {
	t.Helper()
	for _, c := range cases {
		var in io.Reader
		if c.stdin != "" {
			in = strings.NewReader(c.stdin)
		}
		r := e.run(t, pod, container, c.cmd, in, c.tty, c.size)
		if c.wantFailure != "" {
			if r.err == nil || !strings.Contains(r.err.Error(), c.wantFailure) {
				t.Errorf("%s: %+v, want an error saying %q", c.name, r, c.wantFailure)
			}
			continue
		}
		if r.err != nil || r.code != c.wantCode || !strings.Contains(r.stdout, c.wantOut) || !strings.Contains(r.stderr, c.wantErr) {
			t.Errorf("%s: %+v, want code %d, stdout with %q, stderr with %q", c.name, r, c.wantCode, c.wantOut, c.wantErr)
		}
	}
}

// nsProcesses counts the processes of the machine in the namespace
// (kind: net, pid) of pid.
func nsProcesses(t testing.TB, pid int, kind string) int {
	t.Helper()
	want, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/" + kind); err == nil && l == want {
			n++
		}
	}
	return n
}

// badInputs runs n bad or aborted execs (a command that does not exist, a
// missing container, no command, stdin closed at once, a client that
// vanishes mid-copy) and checks that each gets a clear error and that the
// processes in the container and the goroutines of this process (server
// and agent) come back to what they were.
func badInputs(t *testing.T, e *execClient, pod, container string, catCmd []string, n int, pid int, nsKind string) {
	t.Helper()
	// Warm up the transports, then take the baselines.
	_ = e.run(t, pod, container, catCmd, strings.NewReader("x"), false, nil)
	time.Sleep(200 * time.Millisecond)
	procs := nsProcesses(t, pid, nsKind)
	gor := goruntime.NumGoroutine()
	for i := range n {
		switch i % 5 {
		case 0:
			r := e.run(t, pod, container, []string{"no-such-command-here"}, nil, false, nil)
			var se *remotecommand.StatusError
			if !errors.As(r.err, &se) || !strings.Contains(se.Error(), "no-such-command-here") {
				t.Fatalf("case %d, command not found: %+v", i, r)
			}
		case 1:
			r := e.run(t, pod, "nope", []string{"true"}, nil, false, nil)
			var se *remotecommand.StatusError
			if !errors.As(r.err, &se) || se.Status.Code != http.StatusBadRequest || !strings.Contains(se.Error(), "container nope is not valid for pod "+pod) {
				t.Fatalf("case %d, missing container: %+v", i, r)
			}
		case 2:
			r := e.run(t, pod, container, nil, nil, false, nil)
			var se *remotecommand.StatusError
			if !errors.As(r.err, &se) || se.Status.Code != http.StatusBadRequest || !strings.Contains(se.Error(), "you must specify at least one command") {
				t.Fatalf("case %d, no command: %+v", i, r)
			}
		case 3:
			r := e.run(t, pod, container, catCmd, strings.NewReader(""), false, nil)
			if r.err != nil || r.code != 0 || r.stdout != "" {
				t.Fatalf("case %d, stdin closed at once: %+v", i, r)
			}
		case 4:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c, err := e.dial(ctx, pod, "exec", container, remotecommand.Options{Command: catCmd, Stdin: true, Stdout: true, Stderr: true})
			if err != nil {
				cancel()
				t.Fatalf("case %d: %v", i, err)
			}
			_, _ = c.Write(bytes.Repeat([]byte("data "), 10000))
			_ = c.Close() // gone, mid-copy
			cancel()
		}
	}
	eventually(t, 20*time.Second, "no exec process left in the container", func() (bool, error) {
		got := nsProcesses(t, pid, nsKind)
		return got <= procs, fmt.Errorf("%d processes, %d before", got, procs)
	})
	eventually(t, 20*time.Second, "goroutines back to the baseline", func() (bool, error) {
		got := goruntime.NumGoroutine()
		return got <= gor+3, fmt.Errorf("%d goroutines, %d before", got, gor)
	})
}

// skiffCLI runs one skiff verb (kubectl.Commands) with kubeconfig, stdin
// and ctx, and returns what it printed and its exit status.
func skiffCLI(ctx context.Context, kubeconfig, stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	root := &cobra.Command{Use: "skiff", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(kubectl.Commands(kubectl.Env{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb,
		Getenv: func(k string) string {
			if k == "KUBECONFIG" {
				return kubeconfig
			}
			return ""
		}})...)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code = kubectl.PrintError(&errb, err)
	return out.String(), errb.String(), code
}

// checkCLI runs skiff exec, cp and attach against pod (and ticker for
// attach); dir is a directory of the container the test may write, sh
// whether the container has a shell.
func checkCLI(t *testing.T, kubeconfig, pod, ticker, catCmd, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(stdin string, args ...string) (string, string, int) {
		return skiffCLI(ctx, kubeconfig, stdin, args...)
	}
	if out, errs, code := run("abc\n", append([]string{"exec", "-i", pod, "--"}, strings.Fields(catCmd)...)...); code != 0 || out != "abc\n" {
		t.Errorf("skiff exec -i cat: %d %q %q", code, out, errs)
	}
	if out, errs, code := run("", "exec", "-t", pod, "--", "no-such-command-x"); code == 0 || !strings.Contains(errs, "no-such-command-x") || !strings.Contains(errs, "Unable to use a TTY") {
		t.Errorf("skiff exec -t of a missing command: %d %q %q", code, out, errs)
	}
	if _, errs, code := run("", "exec", pod, "-c", "nope", "--", "true"); code != 1 || !strings.Contains(errs, "container nope is not valid") {
		t.Errorf("skiff exec -c nope: %d %q", code, errs)
	}
	if _, errs, code := run("", "exec", pod); code != 1 || !strings.Contains(errs, "expected POD -- COMMAND") {
		t.Errorf("skiff exec without a command: %d %q", code, errs)
	}
	// cp in and out.
	local := t.TempDir()
	if err := os.WriteFile(filepath.Join(local, "in.txt"), []byte("copied in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run("", "cp", filepath.Join(local, "in.txt"), pod+":"+dir+"/in.txt"); code != 0 {
		t.Fatalf("skiff cp to the pod: %d %q", code, errs)
	}
	back := filepath.Join(local, "back.txt")
	if _, errs, code := run("", "cp", pod+":"+dir+"/in.txt", back); code != 0 {
		t.Fatalf("skiff cp from the pod: %d %q", code, errs)
	}
	if b, err := os.ReadFile(back); err != nil || string(b) != "copied in\n" {
		t.Errorf("the round trip: %q %v", b, err)
	}
	if _, errs, code := run("", "cp", pod+":"+dir+"/absent", filepath.Join(local, "x")); code == 0 {
		t.Errorf("skiff cp of a missing file: %d %q", code, errs)
	}
	// attach until interrupted.
	actx, acancel := context.WithTimeout(ctx, 2*time.Second)
	defer acancel()
	if out, errs, code := skiffCLI(actx, kubeconfig, "", "attach", ticker); code != 0 || !strings.Contains(out, "tick") {
		t.Errorf("skiff attach: %d %q %q", code, out, errs)
	}
}
