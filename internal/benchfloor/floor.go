// Package benchfloor measures the floor of a pod-start benchmark on the
// machine it runs on: the same pods' network set up by the same CNI plugins
// and their workload processes started, with no API server, agent,
// scheduler or probe worker in between. A benchmark that reports the
// agent's creation-to-Ready latency (netagent's BenchmarkPodsReady100), or
// an apply's first response (test/e2e's BenchmarkApplyToFirstResponse and
// its containerd twin), runs this in the same run and reports the ratio, so that a figure measured on one machine can be compared with
// one measured on another whose process creation is several times slower
// (docs/performance.md, "Floors and ratios").
//
// # What the floor does
//
// Run sets up a cni.Network (bridge, host-local, loopback: the agent's own
// conflist) inside a node network namespace the caller made, then, for
// every pod at once (one goroutine each, as the agent runs one worker per
// pod): cni AddPod inside the node namespace, the workload started inside
// the pod's namespace by a plain fork/exec from a thread that entered it,
// and an HTTP GET of Options.Path from the node namespace to the pod's IP, retried every
// 10 ms until it answers 200 (the agent's readiness probe is an httpGet).
// Each pod's latency counts from the moment all pods were requested, as the
// agent's benchmark counts from each pod's create.
//
// Options.Start replaces the fork/exec for another runtime (a containerd
// container started in the pod's namespace, say).
//
// Close kills the workloads (by PID) or stops them through Options.Start's
// stop, and deletes the pods' networks.
package benchfloor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	vnetns "github.com/vishvananda/netns"

	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/netns"
)

// Options say what the floor starts.
type Options struct {
	// NodeNetNS is the path of the node network namespace (made and removed
	// by the caller).
	NodeNetNS string
	// DataDir holds the CNI state and the pods' namespace files.
	DataDir string
	// Pods is how many pods to start.
	Pods int
	// Command is the workload, run in each pod's namespace; it must answer
	// an HTTP GET of Path (default "/healthz", netexec's readiness path) on
	// Port with 200.
	Command []string
	// Start, when set, starts pod i's workload instead of Command (a
	// container runtime's start, say), in the network namespace at
	// netnsPath; the stop it returns is called by Close.
	Start func(ctx context.Context, i int, netnsPath string) (stop func() error, err error)
	Port  int
	Path  string
	// PodCIDR and ServiceCIDR are the node's (defaults 10.244.0.0/24 and
	// 10.96.0.0/16).
	PodCIDR, ServiceCIDR netip.Prefix
	// Timeout bounds the whole run (default 2 minutes).
	Timeout time.Duration
}

// Result is one floor run.
type Result struct {
	// Ready holds each pod's time from the start of the run to its first
	// 200, sorted.
	Ready []time.Duration
	// ByPod holds the same times in the pods' order: ByPod[i] is pod i's.
	ByPod []time.Duration
	// All is the time until the last pod answered.
	All time.Duration
}

// Percentile is the q-th percentile (0 < q <= 100) of r.Ready, by the same
// rule as the agent's benchmark: the element at index len*q/100.
func (r Result) Percentile(q int) time.Duration {
	if len(r.Ready) == 0 {
		return 0
	}
	i := min(len(r.Ready)*q/100, len(r.Ready)-1)
	return r.Ready[i]
}

// Floor is a started floor run, with its pods still up until Close.
type Floor struct {
	opts  Options
	net   *cni.Network
	mu    sync.Mutex
	procs []*exec.Cmd
	stops []func() error
	uids  []string
}

// Run starts opts.Pods pods and waits until every one answers. The
// returned Floor must be closed, also when err is not nil.
func Run(ctx context.Context, opts Options) (*Floor, Result, error) {
	if opts.Pods <= 0 || (len(opts.Command) == 0 && opts.Start == nil) || opts.Port == 0 || opts.NodeNetNS == "" || opts.DataDir == "" {
		return &Floor{}, Result{}, errors.New("benchfloor: NodeNetNS, DataDir, Pods, Command (or Start) and Port are required")
	}
	if !opts.PodCIDR.IsValid() {
		opts.PodCIDR = netip.MustParsePrefix("10.244.0.0/24")
	}
	if !opts.ServiceCIDR.IsValid() {
		opts.ServiceCIDR = netip.MustParsePrefix("10.96.0.0/16")
	}
	if opts.Path == "" {
		opts.Path = "/healthz"
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	n, err := cni.New(cni.Config{DataDir: opts.DataDir, PodCIDR: opts.PodCIDR, ServiceCIDR: opts.ServiceCIDR})
	if err != nil {
		return &Floor{}, Result{}, fmt.Errorf("benchfloor: %w", err)
	}
	f := &Floor{opts: opts, net: n}
	if err := netns.Do(opts.NodeNetNS, func() error { return n.Setup(ctx) }); err != nil {
		return f, Result{}, fmt.Errorf("benchfloor: cni setup: %w", err)
	}

	ready := make([]time.Duration, opts.Pods)
	errs := make([]error, opts.Pods)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range opts.Pods {
		wg.Go(func() {
			errs[i] = f.pod(ctx, i)
			ready[i] = time.Since(start)
		})
	}
	wg.Wait()
	res := Result{All: time.Since(start), Ready: slices.Clone(ready), ByPod: ready}
	slices.Sort(res.Ready)
	return f, res, errors.Join(errs...)
}

// pod does one pod's share: network, process, first 200.
func (f *Floor) pod(ctx context.Context, i int) error {
	uid := fmt.Sprintf("floor-%04d", i)
	f.mu.Lock()
	f.uids = append(f.uids, uid)
	f.mu.Unlock()
	var pn cni.PodNetwork
	err := netns.Do(f.opts.NodeNetNS, func() error {
		var err error
		pn, err = f.net.AddPod(ctx, uid, "default", uid, nil)
		return err
	})
	if err != nil {
		return err
	}
	if err := f.start(ctx, i, pn.NetNSPath); err != nil {
		return fmt.Errorf("benchfloor: start %s: %w", uid, err)
	}
	addr := netip.AddrPortFrom(pn.IP, uint16(f.opts.Port)).String()
	for {
		if ok := f.get(addr); ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("benchfloor: %s never answered on %s: %w", uid, addr, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// start starts pod i's workload in the namespace at path: Options.Start,
// or Command forked from a thread inside it.
func (f *Floor) start(ctx context.Context, i int, path string) error {
	if f.opts.Start != nil {
		stop, err := f.opts.Start(ctx, i, path)
		if stop != nil {
			f.mu.Lock()
			f.stops = append(f.stops, stop)
			f.mu.Unlock()
		}
		return err
	}
	cmd := exec.Command(f.opts.Command[0], f.opts.Command[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The child is forked from this locked thread, inside the pod's
	// namespace: it starts there, as the runtime's container does.
	if err := netns.Do(path, cmd.Start); err != nil {
		return err
	}
	f.mu.Lock()
	f.procs = append(f.procs, cmd)
	f.mu.Unlock()
	return nil
}

// get sends one GET of the path to addr from the node namespace and reports a 200.
// The socket is made on a thread inside the namespace (connect and the
// exchange may then run anywhere: the socket stays in it).
func (f *Floor) get(addr string) bool {
	var conn net.Conn
	if err := netns.Do(f.opts.NodeNetNS, func() error {
		var err error
		conn, err = dialHere(addr)
		return err
	}); err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", f.opts.Path, addr); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "HTTP/1.") && strings.Contains(line, " 200 ")
}

// dialHere dials addr with the socket created on the calling thread: net
// dialers create the socket synchronously on the goroutine's thread.
func dialHere(addr string) (net.Conn, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cur, err := vnetns.Get()
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	return net.DialTimeout("tcp", addr, 200*time.Millisecond)
}

// Close kills the workloads (or calls the stops Options.Start returned) and removes the pods' networks.
func (f *Floor) Close() error {
	if f.net == nil {
		return nil
	}
	f.mu.Lock()
	procs, stops, uids := f.procs, f.stops, f.uids
	f.procs, f.stops, f.uids = nil, nil, nil
	f.mu.Unlock()
	for _, p := range procs {
		_ = p.Process.Kill()
		_ = p.Wait()
	}
	var errs []error
	for _, stop := range stops {
		if err := stop(); err != nil {
			errs = append(errs, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, uid := range uids {
		if err := netns.Do(f.opts.NodeNetNS, func() error { return f.net.DelPod(ctx, uid) }); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
