// Command skiff is Skiff's one binary: `skiff server` runs the control plane,
// and the other verbs follow in later issues (agent, CLI, netexec).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/skiff-dev/skiff/internal/cli"
	"github.com/skiff-dev/skiff/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	root := cli.NewRoot(cli.Runners{Server: server.Run}, os.Stdout)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
