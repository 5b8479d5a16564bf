package hardening

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// The kill-9 test runs the shipped binary, as an operator does, with the
// flags of server/rss_test.go's build so that both share the build cache.
// server/crash_test.go kills a re-executed test binary twice after a
// fixed number of acknowledged NodePort creates; this kills `skiff
// server` four times at random moments of a mixed ClusterIP/NodePort
// storm and checks each allocated IP's IPAddress one by one.

// regressBuildSkiff builds cmd/skiff into a temporary dir.
func regressBuildSkiff(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "skiff")
	start := time.Now()
	build := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-ldflags", "-s -w", "-o", bin, "../../cmd/skiff")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built skiff in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// regressFreePort is a loopback port nothing listens on now.
func regressFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// regressProc is one `skiff server` process.
type regressProc struct {
	cmd *exec.Cmd
	out *os.File
}

// regressStartSkiff starts the binary on dataDir and port and waits until
// /readyz answers; it returns the process and an admin client.
func regressStartSkiff(t *testing.T, bin, dataDir string, port int) (*regressProc, *client.Client) {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(t.TempDir(), "skiff.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "server", "--data-dir", dataDir, "--listen", "127.0.0.1:"+strconv.Itoa(port),
		"--disable-agent", "--dns-listen", "")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &regressProc{cmd: cmd, out: logf}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
		logf.Close()
	})
	deadline := time.Now().Add(60 * time.Second)
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	for {
		if c, ok := regressReady(dataDir, url); ok {
			return p, c
		}
		if time.Now().After(deadline) {
			t.Fatalf("skiff server not ready after 60s; log:\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// regressReady is an admin client once the server at url answers
// /readyz.
func regressReady(dataDir, url string) (*client.Client, bool) {
	cfg, err := client.FromKubeconfig(filepath.Join(dataDir, "admin.kubeconfig"))
	if err != nil {
		return nil, false
	}
	cfg.Server = url
	c, err := client.New(cfg)
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var out any
	if err := c.Do(ctx, "GET", "/readyz", nil, &out); err != nil {
		// /readyz answers text; a decode error after a 200 still means ready.
		var ae *client.APIError
		if errors.As(err, &ae) || ctx.Err() != nil || isConnErr(err) {
			return nil, false
		}
	}
	return c, true
}

func isConnErr(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

func (p *regressProc) log() string {
	b, _ := os.ReadFile(p.out.Name())
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b)
}

// sigkill kills the process by its PID and checks that SIGKILL ended it.
func (p *regressProc) sigkill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("skiff did not die of SIGKILL: %v; log:\n%s", p.cmd.ProcessState, p.log())
	}
}

// regressAck is what an acknowledged create (and delete) told the client.
type regressAck struct {
	clusterIP string
	nodePort  int32
	deleting  bool // a DELETE was sent
	deleted   bool // and acknowledged
}

// regressStorm creates Services from workers goroutines, alternating
// ClusterIP and NodePort, deleting every third, until stop is closed or a
// request fails; it records every acknowledgement in acks. A Status
// answer (rather than a broken connection) is an error of the test.
func regressStorm(t *testing.T, c *client.Client, round, workers int, stop <-chan struct{}, mu *sync.Mutex, acks map[string]*regressAck) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("kill-%d-%d-%d", round, w, i)
				typ := api.ServiceTypeClusterIP
				if i%2 == 1 {
					typ = api.ServiceTypeNodePort
				}
				svc := &api.Service{
					ObjectMeta: api.ObjectMeta{Name: name},
					Spec: api.ServiceSpec{Type: typ, Selector: map[string]string{"app": name},
						Ports: []api.ServicePort{{Name: "http", Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(80)}}},
				}
				if err := c.Create(ctx, regressServices, "default", svc); err != nil {
					var ae *client.APIError
					if errors.As(err, &ae) {
						t.Errorf("create %s: the server answered %v", name, err)
					}
					return
				}
				a := &regressAck{clusterIP: svc.Spec.ClusterIP, nodePort: svc.Spec.Ports[0].NodePort}
				mu.Lock()
				acks[name] = a
				mu.Unlock()
				if i%3 != 2 {
					continue
				}
				mu.Lock()
				a.deleting = true
				mu.Unlock()
				if err := c.Delete(ctx, regressServices, "default", name, client.DeleteOptions{}); err != nil {
					var ae *client.APIError
					if errors.As(err, &ae) {
						t.Errorf("delete %s: the server answered %v", name, err)
					}
					return
				}
				mu.Lock()
				a.deleted = true
				mu.Unlock()
			}
		})
	}
	return &wg
}

var (
	regressServices = api.Lookup(api.Resources(), "v1", "services")
	regressIPAddrs  = api.Lookup(api.Resources(), "networking.k8s.io/v1", "ipaddresses")
)

// TestRegressKill9MidStorm: four SIGKILLs of `skiff server` at random
// moments of a create/delete storm, each followed by a restart on the
// same data dir; then no acknowledged write is lost, no allocation is
// duplicated, and no IPAddress is leaked.
func TestRegressKill9MidStorm(t *testing.T) {
	bin := regressBuildSkiff(t)
	dataDir, port := t.TempDir(), regressFreePort(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	var mu sync.Mutex
	acks := map[string]*regressAck{}
	stormStart := time.Now()
	for round := range 4 {
		p, c := regressStartSkiff(t, bin, dataDir, port)
		stop := make(chan struct{})
		before := len(acks)
		wg := regressStorm(t, c, round, 4, stop, &mu, acks)
		// Kill at a random moment once the storm is going (20 acks, so
		// that a loaded machine still kills mid-storm, not before it).
		for wait := time.Now().Add(20 * time.Second); time.Now().Before(wait); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			n := len(acks) - before
			mu.Unlock()
			if n >= 20 {
				break
			}
		}
		time.Sleep(time.Duration(rng.IntN(1200)) * time.Millisecond)
		p.sigkill(t) // mid-request: the storm's next requests fail
		close(stop)
		wg.Wait()
		mu.Lock()
		t.Logf("round %d: %d creates acknowledged, then SIGKILL", round, len(acks)-before)
		mu.Unlock()
		if len(acks) == before {
			t.Fatalf("round %d: nothing acknowledged before the kill; log:\n%s", round, p.log())
		}
	}
	t.Logf("four kills in %v", time.Since(stormStart).Round(time.Millisecond))

	// The start after the last kill runs the allocation repair.
	p, c := regressStartSkiff(t, bin, dataDir, port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var svcs api.ServiceList
	if err := c.List(ctx, regressServices, "", client.ListOptions{}, &svcs); err != nil {
		t.Fatal(err)
	}
	var ipas api.IPAddressList
	if err := c.List(ctx, regressIPAddrs, "", client.ListOptions{}, &ipas); err != nil {
		t.Fatal(err)
	}
	regressCheckAcks(t, svcs.Items, ipas.Items, acks)
	regressCheckAllocations(t, svcs.Items, ipas.Items)

	// A graceful stop, and the store file passes its checks.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("skiff after SIGTERM: %v; log:\n%s", err, p.log())
	}
	if err := storetest.CheckFile(ctx, filepath.Join(dataDir, "db", "skiff.db"), store.BoltOptions{}); err != nil {
		t.Fatalf("store file after four kills: %v", err)
	}
}

// regressCheckAcks: every acknowledged create is stored with what it was
// acknowledged with, unless a delete was sent; every acknowledged delete
// is gone.
func regressCheckAcks(t *testing.T, svcs []api.Service, ipas []api.IPAddress, acks map[string]*regressAck) {
	t.Helper()
	have := map[string]api.Service{}
	for _, s := range svcs {
		if s.Namespace == "default" {
			have[s.Name] = s
		}
	}
	lost := 0
	for name, a := range acks {
		s, ok := have[name]
		switch {
		case a.deleted && ok:
			t.Errorf("acknowledged delete of %s lost: it is stored", name)
		case a.deleting:
			// The delete's answer never came: either outcome is right.
		case !ok:
			if lost++; lost <= 10 {
				t.Errorf("acknowledged create of %s lost", name)
			}
		case s.Spec.ClusterIP != a.clusterIP || s.Spec.Ports[0].NodePort != a.nodePort:
			t.Errorf("%s stored with %s:%d, acknowledged with %s:%d", name, s.Spec.ClusterIP, s.Spec.Ports[0].NodePort, a.clusterIP, a.nodePort)
		}
	}
	if lost > 0 {
		t.Errorf("%d acknowledged creates lost of %d", lost, len(acks))
	}
	t.Logf("%d creates acknowledged; %d Services and %d IPAddresses stored", len(acks), len(svcs), len(ipas))
}

// regressCheckAllocations: ClusterIPs and NodePorts are unique; each
// allocated IP has exactly one IPAddress, pointing at the Service that
// holds it; no IPAddress is without its Service.
func regressCheckAllocations(t *testing.T, svcs []api.Service, ipas []api.IPAddress) {
	t.Helper()
	ipOwner, portOwner := map[string]string{}, map[int32]string{}
	for _, s := range svcs {
		id := s.Namespace + "/" + s.Name
		ips := s.Spec.ClusterIPs
		if len(ips) == 0 && s.Spec.ClusterIP != "" {
			ips = []string{s.Spec.ClusterIP}
		}
		for _, ip := range ips {
			if ip == "" || ip == api.ClusterIPNone {
				continue
			}
			if o, dup := ipOwner[ip]; dup {
				t.Errorf("ClusterIP %s held by %s and %s", ip, o, id)
			}
			ipOwner[ip] = id
		}
		for _, p := range s.Spec.Ports {
			if p.NodePort == 0 {
				if s.Spec.Type == api.ServiceTypeNodePort {
					t.Errorf("NodePort Service %s without a nodePort", id)
				}
				continue
			}
			if o, dup := portOwner[p.NodePort]; dup {
				t.Errorf("NodePort %d held by %s and %s", p.NodePort, o, id)
			}
			portOwner[p.NodePort] = id
		}
	}
	ipaCount := map[string]int{}
	for _, a := range ipas {
		ipaCount[a.Name]++
		ref := a.Spec.ParentRef
		if ref == nil {
			t.Errorf("IPAddress %s without a parentRef", a.Name)
			continue
		}
		if id := ref.Namespace + "/" + ref.Name; ipOwner[a.Name] != id {
			t.Errorf("IPAddress %s points at %s, but the IP is held by %q (a leak)", a.Name, id, ipOwner[a.Name])
		}
	}
	for ip, id := range ipOwner {
		if n := ipaCount[ip]; n != 1 {
			t.Errorf("%s holds %s, which has %d IPAddress objects", id, ip, n)
		}
	}
}
