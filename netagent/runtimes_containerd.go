//go:build !skiff_nocontainerd

package netagent

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
)

// HasContainerd reports whether this binary has the containerd runtime
// (it was not built with -tags skiff_nocontainerd).
const HasContainerd = true

// selectContainerd is SelectRuntime for auto and containerd: the runtime,
// or (nil, "process", nil) when auto falls back to the process runtime.
func selectContainerd(ctx context.Context, name string, o RuntimeOptions, log *slog.Logger) (runtime.Runtime, string, error) {
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
		return nil, RuntimeProcess, nil
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
	}
	return nil, "", fmt.Errorf("netagent: unknown runtime %q (want auto, containerd or process)", name)
}

func newContainerd(ctx context.Context, sock string, o RuntimeOptions, log *slog.Logger) (*containerd.Runtime, error) {
	cfg := containerd.Config{
		Socket:       sock,
		Namespace:    o.ContainerdNamespace,
		LogRoot:      filepath.Join(o.DataDir, "runtime", "containerd", "logs"),
		LoggerBinary: o.ContainerdLogger,
		PlainHTTP:    containerd.PlainHTTPHosts(o.InsecureRegistries),
		Logger:       log.With("component", "runtime"),
	}
	if o.Cgroups != nil {
		cfg.Cgroups = o.Cgroups
	}
	rt, err := containerd.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("netagent: %w", err)
	}
	return rt, nil
}

// The worker finds the pull path by a type assertion: keep it checked.
var _ ImagePuller = (*containerd.Runtime)(nil)
