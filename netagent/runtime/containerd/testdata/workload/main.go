// Command workload is the program the containerd runtime's tests put into
// their image (built static, with CGO_ENABLED=0): `netexec` is Skiff's test
// workload as `skiff netexec` runs it; the other words are small programs
// the tests need.
package main

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/internal/podtest"
	"github.com/skiff-dev/skiff/netexec"
)

func main() {
	if filepath.Base(os.Args[0]) == "tar" { // the image's /bin/tar (kubectl cp)
		os.Exit(tarCmd(os.Args[1:]))
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: workload netexec|tcp-echo ADDR...|ignore-term|print|cat FILE...|write FILE TEXT|exit N")
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
	case "burn": // one busy goroutine for at most 20 s, then sleep
		fmt.Println("ready")
		for t0 := time.Now(); time.Since(t0) < 20*time.Second; {
		}
		for {
			time.Sleep(time.Hour)
		}
	case "alloc": // alloc <MiB>: touch that much memory, then sleep
		if len(args) < 1 {
			return 2
		}
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return 2
		}
		fmt.Println("allocating")
		held := make([][]byte, 0, n)
		for range n {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			held = append(held, b)
		}
		fmt.Println("allocated", len(held))
		for {
			time.Sleep(time.Hour)
		}
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
	case "tick":
		// "tick" ten times a second until SIGTERM (kubectl attach).
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		for ctx.Err() == nil {
			fmt.Println("tick")
			time.Sleep(100 * time.Millisecond)
		}
		return 0
	case "stdin-cat":
		// stdin to stdout, until EOF.
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "stdin-once":
		// stdin to stdout until EOF, then a line, then on until stopped.
		_, _ = io.Copy(os.Stdout, os.Stdin)
		fmt.Println("stdin-closed")
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		<-ctx.Done()
		return 0
	case "ttysize":
		// As `stty size` (rows cols), after a line on stdin; "tty" when
		// stdin is a terminal.
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
		if err != nil {
			fmt.Println("not a terminal:", err)
			return 1
		}
		fmt.Printf("%d %d\ntty\n", ws.Row, ws.Col)
		return 0
	case "write":
		// write FILE TEXT: TEXT into FILE (a volume's persistence).
		if len(args) != 2 {
			fmt.Fprintln(os.Stderr, "usage: workload write FILE TEXT")
			return 2
		}
		if err := os.WriteFile(args[0], []byte(args[1]), 0o644); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		return 0
	case "security":
		// security [PATH...]: the process's ids, its capability sets,
		// no_new_privs and seccomp mode (/proc/self/status), then a write
		// to / and to each PATH (the error, or ok).
		groups, _ := os.Getgroups()
		slices.Sort(groups)
		fmt.Printf("uid=%d gid=%d groups=%v\n", os.Getuid(), os.Getgid(), groups)
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		for l := range strings.Lines(string(b)) {
			for _, k := range []string{"CapPrm:", "CapEff:", "CapBnd:", "NoNewPrivs:", "Seccomp:"} {
				if strings.HasPrefix(l, k) {
					fmt.Println(strings.Join(strings.Fields(l), " "))
				}
			}
		}
		for _, p := range append([]string{"/skiff-ro-test"}, args...) {
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				fmt.Printf("write %s: %v\n", p, err)
			} else {
				fmt.Printf("write %s: ok\n", p)
			}
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

// tarCmd is the little of tar(1) kubectl cp runs: `tar cf - PATH` and
// `tar [--no-same-permissions --no-same-owner] -xmf - [-C DIR]`.
func tarCmd(args []string) int {
	var mode, dir string
	var paths []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "cf" || a == "-cf":
			mode = "c"
		case a == "xmf" || a == "-xmf" || a == "xf" || a == "-xf":
			mode = "x"
		case a == "-":
		case a == "-C" && i+1 < len(args):
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--"):
		default:
			paths = append(paths, a)
		}
	}
	var err error
	switch mode {
	case "c":
		err = tarCreate(os.Stdout, paths)
	case "x":
		err = tarExtract(os.Stdin, dir)
	default:
		err = fmt.Errorf("tar: unsupported arguments %q", args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tar:", err)
		return 2
	}
	return 0
}

func tarCreate(w io.Writer, paths []string) error {
	tw := tar.NewWriter(w)
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			h, err := tar.FileInfoHeader(fi, "")
			if err != nil {
				return err
			}
			h.Name = strings.TrimPrefix(p, "/")
			if d.IsDir() {
				h.Name += "/"
			}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if fi.Mode().IsRegular() {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				_, err = io.Copy(tw, f)
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

func tarExtract(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, fs.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
}
