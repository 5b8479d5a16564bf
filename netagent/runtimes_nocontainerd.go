//go:build skiff_nocontainerd

package netagent

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// HasContainerd reports whether this binary has the containerd runtime
// (it was not built with -tags skiff_nocontainerd).
const HasContainerd = false

// ErrNoContainerd is the error of --runtime containerd in a binary built
// with -tags skiff_nocontainerd.
var ErrNoContainerd = fmt.Errorf("netagent: --runtime containerd: this skiff was built with -tags skiff_nocontainerd, without the containerd runtime; use --runtime process, or a skiff built without that tag")

// selectContainerd is SelectRuntime for auto and containerd in a binary
// without the containerd runtime: auto is the process runtime.
func selectContainerd(ctx context.Context, name string, o RuntimeOptions, log *slog.Logger) (runtime.Runtime, string, error) {
	switch name {
	case "", RuntimeAuto:
		log.Info("built without the containerd runtime (-tags skiff_nocontainerd): using the process runtime")
		return nil, RuntimeProcess, nil
	case RuntimeContainerd:
		return nil, "", ErrNoContainerd
	}
	return nil, "", fmt.Errorf("netagent: unknown runtime %q (want auto, containerd or process)", name)
}
