package server_test

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/client"
)

// TestIdleRSSAndBinarySize builds cmd/skiff as shipped (static, stripped),
// runs `skiff server` on a fresh data dir, waits for /readyz, lets it idle
// for 2 s and logs its resident memory and the binary's size. It asserts
// only generous sanity bounds; the figures go in docs/performance.md. It ends with
// SIGTERM and checks the graceful exit.
func TestIdleRSSAndBinarySize(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "skiff")
	build := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-ldflags", "-s -w", "-o", bin, "../cmd/skiff")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("binary size: %d bytes (%.1f MiB), CGO_ENABLED=0 -trimpath -tags grpcnotrace -ldflags '-s -w'", fi.Size(), float64(fi.Size())/(1<<20))
	if fi.Size() > 150<<20 {
		t.Errorf("binary is %d bytes; sanity bound 150 MiB", fi.Size())
	}

	dataDir := t.TempDir()
	cmd := exec.Command(bin, "server", "--data-dir", dataDir, "--listen", "127.0.0.1:0", "--disable-agent")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	})
	// The "ready" log line carries the URL (the port was 0).
	urlRe := regexp.MustCompile(`url=(https://[^ ]+)`)
	urls := make(chan string, 1)
	logs := &lockedBuffer{}
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			logs.Write([]byte(sc.Text() + "\n"))
			if m := urlRe.FindStringSubmatch(sc.Text()); m != nil && !sent && strings.Contains(sc.Text(), "ready") {
				urls <- m[1]
				sent = true
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatalf("no ready line after 30s; logs:\n%s", logs.String())
	}
	kc, err := client.FromKubeconfig(filepath.Join(dataDir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if kc.Server != url {
		t.Errorf("admin.kubeconfig server %q, the server says %q", kc.Server, url)
	}
	hc := httpClient(t, kc.CAPEM)
	if r := raw(t, hc, "GET", url+"/readyz", "", nil); r.code != http.StatusOK {
		t.Fatalf("/readyz: %d %s", r.code, r.body)
	}
	hc.CloseIdleConnections()
	time.Sleep(2 * time.Second)
	rss := vmRSS(t, pid)
	t.Logf("idle RSS of skiff server (pid %d) 2 s after ready: %d kB (%.1f MiB)", pid, rss, float64(rss)/1024)
	if rss > 200*1024 {
		t.Errorf("idle RSS %d kB; sanity bound 200 MiB", rss)
	}

	// SIGTERM: graceful shutdown, exit status 0.
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("skiff server after SIGTERM: %v; logs:\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("skiff server still running 20 s after SIGTERM")
	}
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no shutdown log line:\n%s", logs.String())
	}
}

// vmRSS reads VmRSS (kB) of pid from /proc.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
