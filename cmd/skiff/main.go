// Command skiff is Skiff's one binary: `skiff server` runs the control plane,
// and the kubectl-style verbs (get, apply, expose, scale, rollout, ...) talk
// to it; agent and netexec follow in later issues.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/skiff-dev/skiff/internal/cli"
	"github.com/skiff-dev/skiff/kubectl"
	"github.com/skiff-dev/skiff/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	root := cli.NewRoot(cli.Runners{Server: server.Run}, os.Stdout)
	if err := root.ExecuteContext(ctx); err != nil {
		os.Exit(kubectl.PrintError(os.Stderr, err))
	}
}
