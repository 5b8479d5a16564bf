// Command skiff is what the e2e suite's containerd image holds at /skiff
// (built static, CGO_ENABLED=0, since the test binary itself may be linked
// against libc): `skiff netexec` as the real skiff runs it, through the
// same netexec package, `skiff exit N` for exec probes, and `skiff cat
// FILE...` (the environment, then the files every 500ms). The real
// binary's image (`skiff image build --self`) is what `make demo
// RUNTIME=containerd` runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/skiff-dev/skiff/netexec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: skiff netexec [--http-port N] [--udp-port N] | exit N | cat FILE...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "netexec":
		os.Exit(runNetexec(os.Args[2:]))
	case "exit":
		code, _ := strconv.Atoi(append(os.Args[2:], "0")[0])
		os.Exit(code)
	case "cat":
		os.Exit(runCat(os.Args[2:]))
	case "write": // skiff write FILE CONTENT (realworld_test.go)
		if len(os.Args) != 4 || os.WriteFile(os.Args[2], []byte(os.Args[3]), 0o644) != nil {
			fmt.Fprintln(os.Stderr, "skiff write: cannot write", os.Args[2:])
			os.Exit(1)
		}
		os.Exit(0)
	case "read": // skiff read FILE: its content once
		b, err := os.ReadFile(append(os.Args[2:], "")[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, "skiff: unknown command", os.Args[1])
	os.Exit(2)
}

// runCat prints the environment (one NAME=value a line), then FILE=content
// and "FILE mode=<octal permissions>" for each file every 500ms, until
// SIGTERM.
func runCat(files []string) int {
	for _, kv := range os.Environ() {
		fmt.Println(kv)
	}
	for {
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				fmt.Printf("%s: %v\n", f, err)
				continue
			}
			fmt.Printf("%s=%s\n", f, b)
			if st, err := os.Stat(f); err == nil {
				fmt.Printf("%s mode=%o\n", f, st.Mode().Perm())
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func runNetexec(args []string) int {
	fs := flag.NewFlagSet("netexec", flag.ContinueOnError)
	httpPort := fs.Int("http-port", 8080, "")
	udpPort := fs.Int("udp-port", 8081, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	log.Info("netexec: serving", "http-port", *httpPort, "pod", netexec.PodName())
	err := netexec.Run(ctx, netexec.Config{HTTPPort: *httpPort, UDPPort: *udpPort, PodName: netexec.PodName(),
		ShutdownTimeout: 5 * time.Second})
	var exit *netexec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netexec:", err)
		return 1
	}
	log.Info("netexec: stopped gracefully", "pod", netexec.PodName())
	return 0
}
