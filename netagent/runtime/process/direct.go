package process

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// startInPod starts argv as a child of the agent inside the pod's
// namespaces, without the helper: a goroutine locks a fresh OS thread,
// enters the namespaces there exactly as Init does (setupPod: the pod's
// netns, a new mount namespace made rslave with /sys, resolv.conf and
// hosts mounted, a new UTS namespace with the pod's host name), changes
// that thread's working directory, and forks the child from it. A child
// inherits the namespaces and working directory of the thread that forks
// it, and Go forks from the calling goroutine's thread. The thread is
// never unlocked: it leaves the process when the goroutine returns, so no
// other goroutine ever runs in the pod's namespaces.
//
// This saves a start of the skiff binary per container (its package
// initialisers, page faults and runtime start: ~7 ms of CPU), which the
// helper costs. Errors (a namespace, the working directory, the command
// not found or not executable) come back from here or from cmd.Start.
func startInPod(o initOptions, cmd *exec.Cmd) error {
	return onThrowawayThread(func() error { return startOnThread(o, cmd) })
}

// onThrowawayThread runs fn on a locked OS thread that leaves the process
// when fn returns (no UnlockOSThread), so fn may change the thread for
// good (namespaces, cgroups, credentials) and no other goroutine ever
// runs there. Never the main thread: a locked goroutine that ends there
// does not end the thread (Go parks it for good), so it would keep the
// changes, and /proc/self, the main thread's view, would show them; while
// a goroutine holds the main thread, the next one runs on another.
func onThrowawayThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			errc <- onThrowawayThread(fn)
			goruntime.UnlockOSThread()
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// startOnThread runs on a locked thread that it may change for good.
func startOnThread(o initOptions, cmd *exec.Cmd) error {
	// The cgroup first: the pod's mount namespace has a /sys of its own,
	// without the node's cgroup file systems.
	if o.cgroup != nil {
		done, err := o.cgroup(cmd)
		if err != nil {
			return err
		}
		defer done()
	}
	// Unsharing a mount namespace also gives the thread a private
	// fs_struct (CLONE_FS), so the Chdir below changes this thread only.
	if err := setupPod(o); err != nil {
		return err
	}
	dir := o.workdir
	if dir == "" {
		dir = "/"
	}
	if err := unix.Chdir(dir); err != nil {
		return fmt.Errorf("chdir %s: %w", dir, err)
	}
	path, err := lookPathEnv(cmd.Args[0], cmd.Env)
	if err != nil {
		return err
	}
	cmd.Path = path
	if o.creds != nil {
		// The child inherits the bounding set and no_new_privs of this
		// thread; its user and groups are cmd's Credential.
		if err := applyThread(*o.creds); err != nil {
			return err
		}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}

// lookPathEnv finds a command as the helper's lookPath does after its
// chdir, but with the PATH of the container's environment env rather than
// the agent's: SelfCommand is this binary, a name with a slash is used as
// it is, anything else is searched for in PATH (an empty entry is the
// working directory).
func lookPathEnv(name string, env []string) (string, error) {
	if name == SelfCommand || strings.Contains(name, "/") {
		return lookPath(name)
	}
	var pathList string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathList = v // the first one, as Go's getenv takes
			break
		}
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if err := executable(p); err != nil {
			continue
		}
		if !filepath.IsAbs(p) {
			// As exec.LookPath since Go 1.19: a command found relative
			// to the working directory through PATH is refused.
			return "", &exec.Error{Name: name, Err: exec.ErrDot}
		}
		return p, nil
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// executable reports whether p is a regular file someone may execute.
func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if m := st.Mode(); m.IsDir() || m&0o111 == 0 {
		return fs.ErrPermission
	}
	return nil
}
