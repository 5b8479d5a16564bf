package netagent

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/skiff-dev/skiff/netagent/cgroups"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
)

// Runtime names (--runtime).
const (
	RuntimeAuto       = "auto"
	RuntimeContainerd = "containerd"
	RuntimeProcess    = "process"
)

// DefaultContainerdSocket is where the agent looks for a containerd that
// runs already (Debian's, started by systemd); runtime/containerd's
// DefaultSocket (a test checks).
const DefaultContainerdSocket = "/run/containerd/containerd.sock"

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
	// ContainerdLogger is the skiff binary the shim runs as the logging
	// binary of each container (`skiff containerd-log`, see
	// runtime/containerd.Config.LoggerBinary); default: os.Executable().
	ContainerdLogger string
	// InsecureRegistries are registry hosts ("host:port", or "host" for
	// any port) pulled from over plain HTTP, besides loopback, which
	// always is (--insecure-registry).
	InsecureRegistries []string
	// Cgroups, when set, is the node's cgroups: the process runtime makes
	// each container's cgroup there, the containerd runtime has runc make
	// it (Sandbox.CgroupParent). Nil: no cgroups.
	Cgroups *cgroups.FS
	Logger  *slog.Logger
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
//
// A binary built with -tags skiff_nocontainerd has no containerd runtime
// (and does not link containerd's client, gRPC and protobuf: a smaller
// agent): auto is then process, and containerd is an error saying so.
func SelectRuntime(ctx context.Context, name string, o RuntimeOptions) (runtime.Runtime, string, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if name != RuntimeProcess {
		rt, chosen, err := selectContainerd(ctx, name, o, log)
		if rt != nil || err != nil {
			return rt, chosen, err
		}
		name = chosen
	}
	pc := process.Config{StateDir: filepath.Join(o.DataDir, "runtime", "process"), Logger: log.With("component", "runtime")}
	if o.Cgroups != nil {
		pc.Cgroups = o.Cgroups
	}
	rt, err := process.New(pc)
	if err != nil {
		return nil, "", fmt.Errorf("netagent: %w", err)
	}
	return rt, name, nil
}
