package netagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
)

// Runtime names (--runtime).
const (
	RuntimeAuto       = "auto"
	RuntimeContainerd = "containerd"
	RuntimeProcess    = "process"
)

// DefaultContainerdSocket is where --runtime auto looks for containerd.
const DefaultContainerdSocket = "/run/containerd/containerd.sock"

// ErrContainerdNotBuilt: the containerd runtime is not part of this build
// yet.
var ErrContainerdNotBuilt = errors.New("netagent: the containerd runtime is not built yet; use --runtime process")

// RuntimeOptions configure SelectRuntime.
type RuntimeOptions struct {
	// DataDir is the agent's data dir; the process runtime keeps its state
	// in DataDir/runtime/process.
	DataDir string
	// ContainerdSocket is probed by auto (default DefaultContainerdSocket).
	ContainerdSocket string
	Logger           *slog.Logger
}

// SelectRuntime builds the runtime --runtime names. auto picks containerd
// when its socket answers and process otherwise; as the containerd
// runtime is not built yet, auto falls back to process with a warning when
// containerd answers, and an explicit containerd fails with
// ErrContainerdNotBuilt. It returns the runtime and the name it chose.
func SelectRuntime(ctx context.Context, name string, o RuntimeOptions) (runtime.Runtime, string, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sock := o.ContainerdSocket
	if sock == "" {
		sock = DefaultContainerdSocket
	}
	switch name {
	case "", RuntimeAuto:
		if socketAnswers(ctx, sock) {
			log.Warn("containerd answers but its runtime is not built yet; using the process runtime", "socket", sock)
		}
		name = RuntimeProcess
	case RuntimeContainerd:
		return nil, "", ErrContainerdNotBuilt
	case RuntimeProcess:
	default:
		return nil, "", fmt.Errorf("netagent: unknown runtime %q (want auto, containerd or process)", name)
	}
	rt, err := process.New(process.Config{StateDir: filepath.Join(o.DataDir, "runtime", "process"), Logger: log.With("component", "runtime")})
	if err != nil {
		return nil, "", fmt.Errorf("netagent: %w", err)
	}
	return rt, name, nil
}

// socketAnswers reports whether a unix socket accepts a connection.
func socketAnswers(ctx context.Context, path string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
