// Command skiff is Skiff's one binary: `skiff server` runs the control plane,
// `skiff netexec` the test workload, and the kubectl-style verbs (get,
// apply, expose, scale, rollout, ...) talk to a running server; the agent
// follows in a later issue. The hidden `skiff runtime-init` is the process
// runtime's helper.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/skiff-dev/skiff/internal/cli"
	"github.com/skiff-dev/skiff/kubectl"
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
		NetExec:     runNetExec,
		RuntimeInit: process.Init,
	}
}

func runNetExec(ctx context.Context, o cli.NetExecOptions) error {
	return netexec.Run(ctx, netexec.Config{
		HTTPPort: o.HTTPPort,
		UDPPort:  o.UDPPort,
		PodName:  netexec.PodName(),
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
}
