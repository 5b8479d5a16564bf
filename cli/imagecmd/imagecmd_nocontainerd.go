//go:build skiff_nocontainerd

package imagecmd

import (
	"context"
	"errors"
	"io"

	"github.com/skiff-dev/skiff/cli"
)

// ErrNoContainerd is every verb's error in a binary built with -tags
// skiff_nocontainerd: the images are containerd's, and this skiff has no
// containerd client.
var ErrNoContainerd = errors.New("image: this skiff was built with -tags skiff_nocontainerd, without containerd; use a skiff built without that tag")

// Runners are the `skiff image` verbs for cli.Runners.Image; in this build
// each fails with ErrNoContainerd.
func Runners() cli.ImageRunners {
	return cli.ImageRunners{
		Import: func(context.Context, cli.ImageOptions, []string, io.Writer) error { return ErrNoContainerd },
		List:   func(context.Context, cli.ImageOptions, io.Writer) error { return ErrNoContainerd },
		Pull:   func(context.Context, cli.ImageOptions, []string, io.Writer) error { return ErrNoContainerd },
		Remove: func(context.Context, cli.ImageOptions, []string, io.Writer) error { return ErrNoContainerd },
		Build: func(context.Context, cli.ImageOptions, cli.ImageBuildOptions, io.Writer) error {
			return ErrNoContainerd
		},
	}
}
