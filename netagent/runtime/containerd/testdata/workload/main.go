// Command workload is the program the containerd runtime's tests put into
// their image (built static, with CGO_ENABLED=0): `netexec` is Skiff's test
// workload as `skiff netexec` runs it; the other words are small programs
// the tests need.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/skiff-dev/skiff/internal/podtest"
	"github.com/skiff-dev/skiff/netexec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: workload netexec|tcp-echo ADDR...|ignore-term|print|cat FILE...|exit N")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(name string, args []string) int {
	switch name {
	case "netexec":
		fs := flag.NewFlagSet("netexec", flag.ContinueOnError)
		httpPort := fs.Int("http-port", 8080, "")
		udpPort := fs.Int("udp-port", 8081, "")
		if err := fs.Parse(args); err != nil {
			return 2
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		err := netexec.Run(ctx, netexec.Config{HTTPPort: *httpPort, UDPPort: *udpPort, PodName: netexec.PodName(), Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
		var ee *netexec.ExitError
		if errors.As(err, &ee) {
			return ee.Code
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("netexec: stopped")
		return 0
	case "tcp-echo":
		return podtest.TCPEcho(args)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		for {
			time.Sleep(time.Hour)
		}
	case "print":
		p := map[string]any{"args": args, "foo": os.Getenv("FOO"), "image": os.Getenv("IMAGE_ENV")}
		p["cwd"], _ = os.Getwd()
		p["uid"], p["gid"] = os.Getuid(), os.Getgid()
		p["groups"], _ = os.Getgroups()
		p["hostname"], _ = os.Hostname()
		b, _ := os.ReadFile("/etc/resolv.conf")
		p["resolvConf"] = string(b)
		b, _ = os.ReadFile("/etc/hosts")
		p["hosts"] = string(b)
		out, _ := json.Marshal(p)
		fmt.Println(string(out))
		fmt.Fprintln(os.Stderr, "a line on stderr")
		return 0
	case "out-err", "err-out":
		// One line to each stream, in the order the name says, then exit
		// at once: the last line must still reach the log.
		out := func() { fmt.Fprintln(os.Stdout, "a line on stdout", args) }
		errw := func() { fmt.Fprintln(os.Stderr, "a line on stderr", args) }
		if name == "out-err" {
			out()
			errw()
		} else {
			errw()
			out()
		}
		return 0
	case "cat":
		// Each file's content, then whether the first one's directory
		// takes a new file (a read-only mount does not).
		for _, f := range args {
			b, err := os.ReadFile(f)
			if err != nil {
				fmt.Println("error:", err)
				return 1
			}
			fmt.Printf("%s=%s\n", f, b)
		}
		if len(args) > 0 {
			err := os.WriteFile(filepath.Join(filepath.Dir(args[0]), "new"), nil, 0o644)
			fmt.Println("write:", err)
		}
		return 0
	case "exit":
		code, _ := strconv.Atoi(append(args, "0")[0])
		fmt.Println("exiting with", code)
		return code
	}
	fmt.Fprintln(os.Stderr, "unknown command", name)
	return 2
}
