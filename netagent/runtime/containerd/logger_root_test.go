package containerd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// TestLastLineReachesLog is the regression test of the shim's file://
// logging, which loses a line a container writes just before it exits
// when its two pipes end in the wrong order (the stdout copier closes the
// shared file under the stderr copier). Containers that write one line to
// stdout and one to stderr (both orders) and exit at once, 30 of each, a
// few at a time: every log must hold both lines.
func TestLastLineReachesLog(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	const runs, parallel = 30, 3
	for _, order := range []string{"out-err", "err-out"} {
		t.Run(order, func(t *testing.T) {
			sb := newSandbox(t, "lastline-"+order, "") // the host's network: nothing to reach
			var (
				mu   sync.Mutex
				errs []string
				wg   sync.WaitGroup
				sem  = make(chan struct{}, parallel)
			)
			fail := func(format string, a ...any) {
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, fmt.Sprintf(format, a...))
			}
			for i := range runs {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					if err := lastLineRun(rt, sb, order, i); err != nil {
						fail("run %d: %v", i, err)
					}
				}()
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d of %d %s containers lost a line:\n%s", len(errs), runs, order, strings.Join(errs, "\n"))
			}
		})
	}
}

// lastLineRun starts one `workload ORDER i` container, waits for its exit
// and for both of its lines in its log (5 s: a lost line never comes),
// and removes it.
func lastLineRun(rt *Runtime, sb runtime.Sandbox, order string, i int) error {
	ctx := context.Background()
	st, err := rt.Start(ctx, sb, runtime.ContainerSpec{Name: fmt.Sprintf("c%d", i), Image: testImage, Args: []string{order, fmt.Sprint(i)}})
	if err != nil {
		return err
	}
	defer rt.Remove(context.WithoutCancel(ctx), st.ID)
	want := []string{fmt.Sprintf("a line on stdout [%d]\n", i), fmt.Sprintf("a line on stderr [%d]\n", i)}
	var logs string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, err := rt.Status(ctx, st.ID)
		if err != nil {
			return err
		}
		if s.State == runtime.StateExited {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still %s after 10 s", s.State)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var b strings.Builder
		if err := rt.Logs(ctx, st.ID, false, &b); err != nil {
			return err
		}
		logs = b.String()
		if strings.Contains(logs, want[0]) && strings.Contains(logs, want[1]) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("5 s after the exit the log is %q, want both %q", logs, want)
		}
	}
}

// TestStartFailsWithoutLogger: a logging binary that exits at once (here
// /bin/true) looks ready to the shim, but writes no log: Start fails and
// leaves no container behind.
func TestStartFailsWithoutLogger(t *testing.T) {
	e := requireContainerd(t)
	if _, err := os.Stat("/bin/true"); err != nil {
		t.Skip("needs /bin/true as a logging binary that does nothing")
	}
	ctx := context.Background()
	rt, err := New(ctx, Config{Socket: e.daemon.Socket, LogRoot: t.TempDir(), LoggerBinary: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	sb := newSandbox(t, "nologger", "")
	st, err := rt.Start(ctx, sb, runtime.ContainerSpec{Name: "main", Image: testImage, Args: []string{"out-err", "0"}})
	if err == nil || !strings.Contains(err.Error(), "did not open the log file") {
		if err == nil {
			_ = rt.Remove(ctx, st.ID)
		}
		t.Fatalf("Start with a logger that does nothing: %v", err)
	}
	list, err := rt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.PodUID == sb.PodUID {
			t.Fatalf("a failed Start left container %+v", c)
		}
	}
}
