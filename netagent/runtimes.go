package netagent

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
)

// Runtime names (--runtime).
const (
	RuntimeAuto       = "auto"
	RuntimeContainerd = "containerd"
	RuntimeProcess    = "process"
)

// DefaultContainerdSocket is where the agent looks for a containerd that
// runs already (Debian's, started by systemd).
const DefaultContainerdSocket = containerd.DefaultSocket

// RuntimeOptions configure SelectRuntime.
type RuntimeOptions struct {
	// DataDir is the agent's data dir: the process runtime keeps its state
	// in DataDir/runtime/process, a containerd the agent starts itself
	// lives in DataDir/containerd, and containerd's default log root is
	// DataDir/runtime/containerd/logs.
	DataDir string
	// ContainerdSocket is the containerd to use (default
	// DefaultContainerdSocket).
	ContainerdSocket string
	// ContainerdNamespace is the containerd namespace of Skiff's containers
	// and images (default "skiff").
	ContainerdNamespace string
	// ContainerdBinary is what a managed daemon runs (default
	// "containerd" on PATH).
	ContainerdBinary string
	Logger           *slog.Logger
}

// ManagedContainerdDir is where the agent runs its own containerd: config,
// root, state and socket.
func ManagedContainerdDir(dataDir string) string { return filepath.Join(dataDir, "containerd") }

// SelectRuntime builds the runtime --runtime names and returns it with the
// name it chose.
//
//   - auto: containerd when a containerd answers, at o.ContainerdSocket or
//     at the socket of a daemon the agent started earlier in its data dir;
//     otherwise process.
//   - containerd: the containerd that answers there; if none does but a
//     containerd binary is on PATH, the agent starts one itself, as k3s
//     does (StartDaemon: everything under ManagedContainerdDir, the CRI
//     plugin disabled) and stops it (by PID) when the runtime is closed;
//     one that an earlier agent started and left running (it was killed)
//     is adopted and stopped the same way (AdoptDaemon). auto uses such a
//     daemon but never stops it.
//   - process: the process runtime.
//
// A containerd runtime implements io.Closer: the caller closes it when the
// agent ends (its containers keep running, in their shims).
func SelectRuntime(ctx context.Context, name string, o RuntimeOptions) (runtime.Runtime, string, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sock := o.ContainerdSocket
	if sock == "" {
		sock = DefaultContainerdSocket
	}
	managed := containerd.DaemonSocket(ManagedContainerdDir(o.DataDir))
	answering := ""
	for _, s := range []string{sock, managed} {
		if containerd.SocketAnswers(ctx, s) {
			answering = s
			break
		}
	}
	switch name {
	case "", RuntimeAuto:
		if answering != "" {
			rt, err := newContainerd(ctx, answering, o, log)
			if err == nil {
				return rt, RuntimeContainerd, nil
			}
			log.Warn("containerd answers but cannot be used; using the process runtime", "socket", answering, "err", err)
		}
		name = RuntimeProcess
	case RuntimeContainerd:
		if answering != "" {
			rt, err := newContainerd(ctx, answering, o, log)
			if err != nil {
				return nil, "", err
			}
			if answering == managed {
				// Left by an agent that was killed: ours to stop now.
				if d, ok := containerd.AdoptDaemon(ctx, ManagedContainerdDir(o.DataDir), log); ok {
					rt.OnClose(d.Stop)
				}
			}
			return rt, RuntimeContainerd, nil
		}
		bin := o.ContainerdBinary
		if bin == "" {
			bin = "containerd"
		}
		if _, err := exec.LookPath(bin); err != nil {
			return nil, "", fmt.Errorf("netagent: --runtime containerd: no containerd answers at %s and there is no %s binary to start one: %w", sock, bin, err)
		}
		d, err := containerd.StartDaemon(ctx, containerd.DaemonConfig{Binary: bin, Dir: ManagedContainerdDir(o.DataDir), Logger: log})
		if err != nil {
			return nil, "", fmt.Errorf("netagent: %w", err)
		}
		rt, err := newContainerd(ctx, d.Socket, o, log)
		if err != nil {
			_ = d.Stop()
			return nil, "", err
		}
		rt.OnClose(d.Stop)
		return rt, RuntimeContainerd, nil
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

func newContainerd(ctx context.Context, sock string, o RuntimeOptions, log *slog.Logger) (*containerd.Runtime, error) {
	rt, err := containerd.New(ctx, containerd.Config{
		Socket:    sock,
		Namespace: o.ContainerdNamespace,
		LogRoot:   filepath.Join(o.DataDir, "runtime", "containerd", "logs"),
		Logger:    log.With("component", "runtime"),
	})
	if err != nil {
		return nil, fmt.Errorf("netagent: %w", err)
	}
	return rt, nil
}
