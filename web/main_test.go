package web_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime/process"
	"github.com/skiff-dev/skiff/netexec"
)

// TestMain lets the test binary be the pods of the real-trace test: the
// process runtime re-executes it as its helper (process.InitCommand), and
// the pods run it as "skiff netexec" (skiff is this binary for the
// process runtime).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case process.InitCommand:
			err := process.Init(os.Args[2:])
			fmt.Fprintln(os.Stderr, "Error:", err)
			os.Exit(1)
		case "netexec":
			os.Exit(runNetexec(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

// runNetexec serves netexec, logging to stdout (what the pod's logs show).
func runNetexec(args []string) int {
	fs := flag.NewFlagSet("netexec", flag.ContinueOnError)
	httpPort := fs.Int("http-port", 8080, "")
	udpPort := fs.Int("udp-port", 8081, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := netexec.Run(ctx, netexec.Config{HTTPPort: *httpPort, UDPPort: *udpPort, PodName: netexec.PodName(),
		ShutdownTimeout: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(os.Stdout, nil))})
	var exit *netexec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netexec:", err)
		return 1
	}
	return 0
}
