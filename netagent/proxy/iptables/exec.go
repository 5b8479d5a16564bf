package iptables

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
)

// Exec runs the iptables tools. It is the backend's only way to the
// kernel; tests give it a validating fake (iptablestest.Fake).
type Exec interface {
	// Run runs name with args, stdin as its input, and returns its
	// standard output. A command that ran and failed returns an
	// *ExitError.
	Run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error)
}

// ExitError is a command that ran and exited non-zero.
type ExitError struct {
	Command string
	Code    int
	Stderr  string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("%s: exit status %d: %s", e.Command, e.Code, strings.TrimSpace(e.Stderr))
}

// exitCode is the exit status of err's *ExitError, or -1.
func exitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

// OSExec runs the real binaries. With NetNS set (a path such as
// /run/netns/NAME) the command runs in that network namespace: the
// calling thread enters it just for the fork, so nothing else in the
// process moves.
type OSExec struct {
	NetNS string
}

var _ Exec = OSExec{}

// Run implements Exec.
func (o OSExec) Run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := o.start(cmd); err != nil {
		return nil, fmt.Errorf("iptables: %s: %w", name, err)
	}
	err := cmd.Wait()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.Bytes(), &ExitError{Command: name, Code: ee.ExitCode(), Stderr: stderr.String()}
		}
		return stdout.Bytes(), fmt.Errorf("iptables: %s: %w", name, err)
	}
	return stdout.Bytes(), nil
}

// start starts cmd, from inside NetNS when set.
func (o OSExec) start(cmd *exec.Cmd) error {
	if o.NetNS == "" {
		return cmd.Start()
	}
	target, err := netns.GetFromPath(o.NetNS)
	if err != nil {
		return fmt.Errorf("open netns %s: %w", o.NetNS, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current netns: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", o.NetNS, err)
	}
	startErr := cmd.Start()
	if err := netns.Set(orig); err != nil {
		// The thread stays locked, so the runtime retires it when this
		// goroutine ends instead of reusing it in the wrong namespace.
		return errors.Join(startErr, fmt.Errorf("return from netns %s: %w", o.NetNS, err))
	}
	runtime.UnlockOSThread()
	return startErr
}
