// Command skiff is Skiff's one binary: `skiff server` runs the control plane
// (and a node agent), `skiff agent` joins another machine as a node,
// `skiff netexec` is the test workload, and the kubectl-style verbs (get,
// apply, expose, scale, rollout, ...) talk to a running server. The hidden
// `skiff runtime-init` is the process runtime's helper; the hidden
// `skiff containerd-log` is the containerd shim's logging binary.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/cli/imagecmd"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/internal/nsforward"
	"github.com/skiff-dev/skiff/kubectl"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/logdriver"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
	"github.com/skiff-dev/skiff/netexec"
	"github.com/skiff-dev/skiff/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	root := cli.NewRoot(runners(), os.Stdout)
	if err := root.ExecuteContext(ctx); err != nil {
		// netexec's /exit?code=N: exit with N, quietly.
		var exit *netexec.ExitError
		if errors.As(err, &exit) {
			stop()
			os.Exit(exit.ExitCode())
		}
		stop()
		os.Exit(kubectl.PrintError(os.Stderr, err))
	}
}

func runners() cli.Runners {
	return cli.Runners{
		Server:      server.Run,
		Agent:       runAgent,
		NetExec:     runNetExec,
		RuntimeInit: process.Init,
		Image:       imagecmd.Runners(),
		Forward:     runForward,
		// The containerd shim's logging binary (binary:// scheme).
		ContainerdLog: logdriver.RunLogger,
		Backup:        runBackup,
		SecretsEncrypt: func(ctx context.Context, o cli.SecretsEncryptOptions, out io.Writer) error {
			if o.Verb == "rotate" {
				return server.SecretsEncryptRotate(ctx, o.DataDir, out)
			}
			return server.SecretsEncryptStatus(ctx, o.DataDir, out)
		},
	}
}

// runBackup is `skiff backup`: server.Backup, or server.Restore with
// --restore.
func runBackup(ctx context.Context, o cli.BackupOptions, out io.Writer) error {
	if o.Restoring() {
		if err := server.Restore(ctx, o.DataDir, o.Restore); err != nil {
			return err
		}
		_, err := fmt.Fprintf(out, "restored %s as the database of %s\n", o.Restore, o.DataDir)
		return err
	}
	if err := server.Backup(ctx, o.DataDir, o.File); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "wrote a backup of %s to %s\n", o.DataDir, o.File)
	return err
}

// runForward is the hidden `skiff netns-forward` the demo uses to reach
// the server inside its namespace from the host's loopback.
func runForward(ctx context.Context, o cli.ForwardOptions) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	return nsforward.Run(ctx, nsforward.Config{
		Listen: o.Listen, Target: o.Target, Logger: log,
		Enter: func(fn func() error) error { return netns.Do(o.NetNS, fn) },
	}, func(a net.Addr) { log.Info("forwarding", "listen", a.String(), "netns", o.NetNS, "target", o.Target) })
}

func runNetExec(ctx context.Context, o cli.NetExecOptions) error {
	return netexec.Run(ctx, netexec.Config{
		HTTPPort: o.HTTPPort,
		UDPPort:  o.UDPPort,
		PodName:  netexec.PodName(),
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
}

// agentMemoryLimit is the agent's soft Go memory limit, and
// agentGCPercent its GC target: the heap may grow 25 % over what is live
// between collections instead of Go's default 100 %. The agent's live heap
// is a few MB, so a collection costs little CPU; with 100 pods this keeps
// ~4 MB less resident (docs/performance.md, "Node agent").
const (
	agentMemoryLimit = 20 << 20
	agentGCPercent   = 25
)

// tuneAgentGC keeps a node agent small: a soft limit of the Go heap and a
// low GC target make the GC work harder instead of letting the heap double.
// GOMEMLIMIT and GOGC, when set, win. Pods are other processes and are not
// counted.
func tuneAgentGC(getenv func(string) string) {
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(agentMemoryLimit)
	}
	if getenv("GOGC") == "" {
		debug.SetGCPercent(agentGCPercent)
	}
}

// runAgent is `skiff agent`: the runtime, then the agent until ctx ends.
func runAgent(ctx context.Context, c config.Agent) error {
	p, err := c.Parse()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	tuneAgentGC(os.Getenv)
	token := c.Token
	if token == "" {
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	var ca []byte
	if c.ServerCA != "" {
		if ca, err = os.ReadFile(c.ServerCA); err != nil {
			return fmt.Errorf("--server-ca: %w", err)
		}
	}
	cg, why, err := netagent.NodeCgroups(c.Cgroups)
	if err != nil {
		return err
	}
	if cg == nil {
		log.Warn("no pod cgroups: resources.limits and requests are not enforced", "why", why)
	}
	rt, rtName, err := netagent.SelectRuntime(ctx, c.Runtime, netagent.RuntimeOptions{DataDir: c.DataDir, ContainerdSocket: c.ContainerdSocket, InsecureRegistries: c.InsecureRegistries, Cgroups: cg, Logger: log})
	if err != nil {
		return err
	}
	if cl, ok := rt.(io.Closer); ok {
		// Stops a containerd the agent started; pods keep running.
		defer cl.Close()
	}
	deps := netagent.Deps{Runtime: rt, Proxy: netagent.RunProxy}
	if cg != nil {
		deps.Cgroups = cg
	}
	if c.NetNS != "" {
		path := c.NetNS
		deps.NodeNetNS = func(fn func() error) error { return netns.Do(path, fn) }
	}
	return netagent.Run(ctx, netagent.Config{
		Server: c.Server, CAPEM: ca, Token: token, NodeName: c.NodeName, NodeIPs: p.NodeIPs,
		DataDir: c.DataDir, CgroupRoot: c.CgroupRoot, AllowedUnsafeSysctls: c.AllowedUnsafeSysctls, Runtime: rtName, ProxyMode: c.ProxyMode, IPVSScheduler: c.IPVSScheduler, ClusterCIDR: p.ClusterCIDR, ClusterDomain: c.ClusterDomain,
		PodRoutes: c.PodRoutes, NoEgressMasquerade: !c.EgressMasquerade, DNSUpstreams: c.DNSUpstream, NodeAPIListen: c.NodeAPIListen, NodeAPIURL: c.NodeAPIURL, Logger: log,
		MetricsListen: c.MetricsBindAddress, HealthzListen: c.HealthzBindAddress,
		// 0 asks netagent for its default; --pod-termination-delay 0 means none.
		TerminationDelay: cmp.Or(c.TerminationDelay, -1),
	}, deps)
}
