// Package podtest lets a `go test` binary be the programs that pods run
// on the process runtime in root tests: the runtime re-executes its own
// binary as its init helper (process.InitCommand), and pods whose command
// is `skiff netexec ...` run the agent's binary, here the test binary.
//
// A test package's TestMain calls Main; it is test support, imported only
// by _test.go files.
//
// # Invariants
//
//   - Main returns only when the binary was started as a test run; as a
//     helper or a pod it exits the process with the program's status.
package podtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime/process"
	"github.com/skiff-dev/skiff/netexec"
)

// Options tune the netexec a pod runs.
type Options struct {
	// ShutdownTimeout is netexec's drain on SIGTERM (default 5s).
	ShutdownTimeout time.Duration
	// LogToStdout makes netexec log to stdout (what a pod's logs show);
	// otherwise it logs nothing.
	LogToStdout bool
}

// Main dispatches os.Args: `runtime-init ...` (the process runtime's
// helper), `netexec ...`, `ignore-term ...` (netexec that ignores
// SIGTERM, so only SIGKILL ends it) and `tcp-echo ADDR...` (a TCP echo on
// each address, e.g. 127.0.0.1:9000 for a loopback-only app); anything
// else runs the tests.
func Main(m *testing.M, o Options) {
	Dispatch(o)
	os.Exit(m.Run())
}

// Dispatch is Main's first half, for a TestMain of its own: it runs the
// helper or program os.Args names and exits, or returns when the binary
// was started as a test run.
func Dispatch(o Options) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case process.InitCommand:
			err := process.Init(os.Args[2:])
			fmt.Fprintln(os.Stderr, "Error:", err)
			os.Exit(1)
		case "netexec":
			os.Exit(runNetexec(os.Args[2:], true, o))
		case "ignore-term":
			signal.Ignore(syscall.SIGTERM)
			os.Exit(runNetexec(os.Args[2:], false, o))
		case "tcp-echo":
			os.Exit(TCPEcho(os.Args[2:]))
		}
	}
}

func runNetexec(args []string, onTerm bool, o Options) int {
	fs := flag.NewFlagSet("netexec", flag.ContinueOnError)
	httpPort := fs.Int("http-port", 8080, "")
	udpPort := fs.Int("udp-port", 8081, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sigs := []os.Signal{syscall.SIGINT}
	if onTerm {
		sigs = append(sigs, syscall.SIGTERM)
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	defer stop()
	cfg := netexec.Config{HTTPPort: *httpPort, UDPPort: *udpPort, PodName: netexec.PodName(), ShutdownTimeout: o.ShutdownTimeout}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 5 * time.Second
	}
	if o.LogToStdout {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stdout, nil))
	}
	err := netexec.Run(ctx, cfg)
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

// TCPEcho echoes every connection on each address until SIGTERM, with
// 256 KiB buffers (a throughput workload for port-forward); the
// containerd tests' workload runs it too. It returns the exit status.
func TCPEcho(addrs []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tcp-echo:", err)
			return 1
		}
		context.AfterFunc(ctx, func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					_, _ = io.CopyBuffer(struct{ io.Writer }{c}, struct{ io.Reader }{c}, make([]byte, 256<<10))
				}()
			}
		}()
	}
	<-ctx.Done()
	return 0
}
