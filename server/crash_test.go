package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// crashChildEnv names the data dir of a server that TestMain runs instead
// of the tests: the crash test re-executes its own binary as a server
// process, so that it can SIGKILL it.
const crashChildEnv = "SKIFF_CRASH_CHILD_DATA_DIR"

// runCrashChild runs a server with fsync on, on a random loopback port,
// prints "READY <url>" and serves until it is killed (or SIGTERM).
func runCrashChild() int {
	cfg := config.ServerDefaults()
	cfg.DataDir = os.Getenv(crashChildEnv)
	cfg.Listen = "127.0.0.1:0"
	cfg.DisableAgent = true
	cfg.NoSync = false
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	s, err := server.Start(ctx, cfg, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return 1
	}
	fmt.Printf("READY %s\n", s.URL())
	<-ctx.Done()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "crash child: stop:", err)
		return 1
	}
	return 0
}

// child is a server process the test owns.
type child struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startChild starts the test binary as a server on dataDir and waits for
// READY. The child is SIGKILLed (by PID) at cleanup if still running.
func startChild(t *testing.T, dataDir string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dataDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = ch.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				ready <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case ch.url = <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("child server not ready after 30s; stderr:\n%s", ch.stderr.String())
	}
	return ch
}

// sigkill sends SIGKILL to the child's PID; any goroutine may call it.
func (ch *child) sigkill() {
	_ = ch.cmd.Process.Signal(syscall.SIGKILL)
}

// reap waits for the killed child and checks that SIGKILL ended it.
func (ch *child) reap(t *testing.T) {
	t.Helper()
	err := ch.cmd.Wait()
	ws, ok := ch.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v (stderr:\n%s)", err, ch.stderr.String())
	}
}

// adminClient reads the data dir's admin kubeconfig, pointed at url.
func adminClient(t *testing.T, dataDir, url string) *client.Client {
	t.Helper()
	cfg, err := client.FromKubeconfig(filepath.Join(dataDir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server = url
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// acked is what a 201 (or a 200 to a DELETE) told the client.
type acked struct {
	clusterIP string
	nodePort  int32
	// deleting: a DELETE was sent; without deleted, its answer never came,
	// so the Service may or may not exist.
	deleting bool
	deleted  bool
}

// storm creates NodePort Services from workers goroutines (and deletes
// every third one it created) until the server dies, and returns what was
// acknowledged. kill is called once killAfter creates were acknowledged.
func storm(t *testing.T, c *client.Client, round, workers, killAfter int, kill func()) (map[string]acked, int) {
	var (
		mu       sync.Mutex
		acks     = map[string]acked{}
		sent     atomic.Int64
		created  atomic.Int64
		killOnce sync.Once
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("storm-%d-%d-%d", round, w, i)
				svc := service(name, api.ServiceTypeNodePort, 80)
				sent.Add(1)
				if err := c.Create(ctx, resServices, "default", svc); err != nil {
					if ctx.Err() == nil && isAPIError(err) {
						t.Errorf("create %s: server answered %v", name, err)
					}
					return
				}
				mu.Lock()
				acks[name] = acked{clusterIP: svc.Spec.ClusterIP, nodePort: svc.Spec.Ports[0].NodePort}
				mu.Unlock()
				if created.Add(1) == int64(killAfter) {
					killOnce.Do(kill)
				}
				if i%3 == 2 {
					mu.Lock()
					a := acks[name]
					a.deleting = true
					acks[name] = a
					mu.Unlock()
					if err := c.Delete(ctx, resServices, "default", name, client.DeleteOptions{}); err != nil {
						if ctx.Err() == nil && isAPIError(err) {
							t.Errorf("delete %s: server answered %v", name, err)
						}
						return
					}
					mu.Lock()
					a = acks[name]
					a.deleted = true
					acks[name] = a
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	killOnce.Do(kill) // the storm may have ended for another reason
	return acks, int(sent.Load())
}

func isAPIError(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae)
}

// TestCrashMidStormLosesNoAckedWriteAndLeaksNoIP kills a server process
// with SIGKILL in the middle of a write storm, twice, restarting it on the
// same data dir each time, then checks every acknowledged create and
// delete and the allocation invariants on a final server.
func TestCrashMidStormLosesNoAckedWriteAndLeaksNoIP(t *testing.T) {
	dataDir := t.TempDir()
	all := map[string]acked{}
	for round := range 2 {
		ch := startChild(t, dataDir)
		c := adminClient(t, dataDir, ch.url)
		if round > 0 {
			verifyAcked(t, c, all) // the previous kill lost nothing
		}
		killAfter := 200 + 100*round
		acks, sent := storm(t, c, round, 16, killAfter, ch.sigkill)
		ch.reap(t)
		created, deleted := 0, 0
		for name, a := range acks {
			all[name] = a
			created++
			if a.deleted {
				deleted++
			}
		}
		t.Logf("round %d: %d creates sent, %d acknowledged, %d deletes acknowledged, then SIGKILL", round, sent, created, deleted)
		if created < killAfter {
			t.Fatalf("round %d: only %d creates acknowledged before the storm ended; stderr:\n%s", round, created, ch.stderr.String())
		}
	}

	ts := servertest.Start(t, servertest.Options{DataDir: dataDir, Sync: true})
	verifyAcked(t, ts.Client(), all)
	stored := checkAllocations(t, ts.Client())

	// Allocating after the restart never returns what a stored Service holds.
	heldIP, heldPort := map[string]bool{}, map[int32]bool{}
	for _, s := range stored {
		heldIP[s.Spec.ClusterIP] = true
		for _, p := range s.Spec.Ports {
			heldPort[p.NodePort] = true
		}
	}
	ctx := ctxT(t, 60*time.Second)
	for i := range 50 {
		s := service(fmt.Sprintf("after-crash-%d", i), api.ServiceTypeNodePort, 80)
		if err := ts.Client().Create(ctx, resServices, "default", s); err != nil {
			t.Fatal(err)
		}
		if heldIP[s.Spec.ClusterIP] || heldPort[s.Spec.Ports[0].NodePort] {
			t.Fatalf("after restart, %s got %s:%d, already held by a stored Service", s.Name, s.Spec.ClusterIP, s.Spec.Ports[0].NodePort)
		}
	}
	checkAllocations(t, ts.Client())

	// The store file itself passes its checks after the crashes.
	ts.Stop()
	if err := storetest.CheckFile(ctx, filepath.Join(dataDir, "db", "skiff.db"), store.BoltOptions{}); err != nil {
		t.Fatalf("store file after crashes: %v", err)
	}
}

// verifyAcked checks that every acknowledged create is stored with the
// ClusterIP and NodePort it was acknowledged with, and every acknowledged
// delete is gone, with its IPAddress.
func verifyAcked(t *testing.T, c *client.Client, want map[string]acked) {
	t.Helper()
	svcs := listServices(t, c)
	have := map[string]api.Service{}
	for _, s := range svcs {
		have[s.Name] = s
	}
	ipas := map[string]string{}
	for _, a := range listIPAddresses(t, c) {
		if a.Spec.ParentRef != nil {
			ipas[a.Name] = a.Spec.ParentRef.Name
		}
	}
	lost := 0
	for name, a := range want {
		s, ok := have[name]
		switch {
		case a.deleted && ok:
			t.Errorf("acknowledged delete of %s lost: it is stored", name)
		case a.deleted && ipas[a.clusterIP] == name:
			t.Errorf("acknowledged delete of %s left its IPAddress %s", name, a.clusterIP)
		case a.deleted:
		case a.deleting && !ok: // the unacknowledged delete committed
			if ipas[a.clusterIP] == name {
				t.Errorf("%s is gone but its IPAddress %s is left", name, a.clusterIP)
			}
		case !ok:
			lost++
			if lost < 10 {
				t.Errorf("acknowledged create of %s lost", name)
			}
		case s.Spec.ClusterIP != a.clusterIP || s.Spec.Ports[0].NodePort != a.nodePort:
			t.Errorf("%s stored with %s:%d, acknowledged with %s:%d", name, s.Spec.ClusterIP, s.Spec.Ports[0].NodePort, a.clusterIP, a.nodePort)
		case ipas[a.clusterIP] != name:
			t.Errorf("%s holds %s but the IPAddress points at %q", name, a.clusterIP, ipas[a.clusterIP])
		}
	}
	if lost > 0 {
		t.Fatalf("%d acknowledged creates lost", lost)
	}
}
