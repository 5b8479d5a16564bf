package process

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netexec"
)

// TestMain lets the test binary be every program the tests run: the init
// helper (HelperPath defaults to /proc/self/exe, which is this binary) and
// the workloads the helper then execs (os.Executable plus a command word).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		if code, ok := runTestCommand(os.Args[1], os.Args[2:]); ok {
			os.Exit(code)
		}
	}
	os.Exit(m.Run())
}

func runTestCommand(name string, args []string) (int, bool) {
	switch name {
	case InitCommand:
		err := Init(args)
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1, true
	case "netexec":
		return cmdNetexec(args), true
	case "trap-term":
		return cmdTrapTerm(args), true
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		for {
			time.Sleep(time.Hour)
		}
	case "print":
		return cmdPrint(args), true
	case "start-detached":
		return cmdStartDetached(args), true
	}
	return 0, false
}

// cmdNetexec is `skiff netexec` as the cli wires it.
func cmdNetexec(args []string) int {
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
}

// cmdTrapTerm prints "ready", waits for SIGTERM, then exits 0 after the
// given delay.
func cmdTrapTerm(args []string) int {
	delay, err := time.ParseDuration(args[0])
	if err != nil {
		return 2
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	fmt.Println("ready")
	<-ch
	fmt.Println("got SIGTERM")
	time.Sleep(delay)
	fmt.Println("exiting")
	return 0
}

// printed is what the "print" workload reports about its surroundings.
type printed struct {
	Args       []string `json:"args"`
	Foo        string   `json:"foo"`
	Path       string   `json:"path"`
	Cwd        string   `json:"cwd"`
	Hostname   string   `json:"hostname"`
	ResolvConf string   `json:"resolvConf"`
	Hosts      string   `json:"hosts"`
	Links      []string `json:"links"`
	NetNS      string   `json:"netns"`
}

func cmdPrint(args []string) int {
	var p printed
	p.Args = args
	p.Foo = os.Getenv("FOO")
	p.Path = os.Getenv("PATH")
	p.Cwd, _ = os.Getwd()
	p.Hostname, _ = os.Hostname()
	b, _ := os.ReadFile("/etc/resolv.conf")
	p.ResolvConf = string(b)
	b, _ = os.ReadFile("/etc/hosts")
	p.Hosts = string(b)
	ents, _ := os.ReadDir("/sys/class/net")
	for _, e := range ents {
		p.Links = append(p.Links, e.Name())
	}
	p.NetNS, _ = os.Readlink("/proc/self/ns/net")
	out, _ := json.Marshal(p)
	fmt.Println(string(out))
	fmt.Fprintln(os.Stderr, "a line on stderr")
	return 0
}

// cmdStartDetached plays an agent that starts one container and exits, so
// the container is orphaned as after an agent restart: STATEDIR NETNS
// RESOLV HOSTS LOGDIR -- ARGV... ($SKIFF_TEST_STDIN "stdin" or "once": a
// container with stdin, stdinOnce).
func cmdStartDetached(args []string) int {
	if len(args) < 7 || args[5] != "--" {
		return 2
	}
	rt, err := New(Config{StateDir: args[0]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, err := rt.Start(context.Background(),
		runtime.Sandbox{PodUID: "uid-adopted", Namespace: "default", Name: "adopted", NetNSPath: args[1], ResolvConf: args[2], Hosts: args[3], LogDir: args[4]},
		runtime.ContainerSpec{Name: "main", Command: args[6:7], Args: args[7:],
			Stdin: os.Getenv("SKIFF_TEST_STDIN") != "", StdinOnce: os.Getenv("SKIFF_TEST_STDIN") == "once"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out, _ := json.Marshal(st)
	fmt.Println(string(out))
	return 0
}

// hasLine reports whether s has a line equal to line.
func hasLine(s, line string) bool {
	for l := range strings.Lines(s) {
		if strings.TrimRight(l, "\n") == line {
			return true
		}
	}
	return false
}
