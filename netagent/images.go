package netagent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Waiting reasons of image pulls, as the kubelet reports them.
const (
	reasonErrImagePull      = "ErrImagePull"
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonErrImageNeverPull = "ErrImageNeverPull"
)

// ImagePuller is what the agent needs of a runtime that has images
// (runtime/containerd does; the process runtime has none). The worker
// pulls a container's image per its imagePullPolicy before Start.
type ImagePuller interface {
	ImagePresent(ctx context.Context, image string) (bool, error)
	PullImage(ctx context.Context, image string, progress func(runtime.PullProgress)) (runtime.ImageInfo, error)
}

// pullPolicy is the container's imagePullPolicy; when it sets none, the
// Kubernetes default (Always for ":latest" or no tag, else IfNotPresent).
func pullPolicy(c *api.Container) string {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	return runtime.DefaultPullPolicy(c.Image)
}

// ensureImage makes c's image present as its pull policy says, with the
// kubelet's events: Pulling, Pulled ("Successfully pulled" or "already
// present on machine"), Failed, ErrImageNeverPull; a layer being fetched
// is a Pulling event too. On failure it sets c's waiting reason and
// returns an error (the worker retries with back-off).
func (w *podWorker) ensureImage(ctx context.Context, pod *api.Pod, c *ctr) error {
	p, ok := w.m.rt.(ImagePuller)
	if !ok {
		return nil
	}
	image := c.spec.Image
	policy := pullPolicy(&c.spec)
	present, err := p.ImagePresent(ctx, image)
	if err != nil {
		c.waitReason, c.waitMsg = reasonErrImagePull, err.Error()
		w.m.event(pod, api.EventTypeWarning, "Failed", "Failed to inspect image %q: %v", image, err)
		return err
	}
	switch {
	case policy == api.PullNever && !present:
		c.waitReason = reasonErrImageNeverPull
		c.waitMsg = fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
		w.m.event(pod, api.EventTypeWarning, reasonErrImageNeverPull, "%s", c.waitMsg)
		return errors.New(c.waitMsg)
	case present && policy != api.PullAlways:
		w.m.event(pod, api.EventTypeNormal, "Pulled", "Container image %q already present on machine", image)
		return nil
	}
	w.m.event(pod, api.EventTypeNormal, "Pulling", "Pulling image %q", image)
	t0 := time.Now()
	info, err := p.PullImage(ctx, image, func(pp runtime.PullProgress) {
		w.log.Debug("pulling", "image", image, "mediaType", pp.MediaType, "digest", pp.Digest, "size", pp.Size)
		if isLayer(pp.MediaType) && pp.Fetched == 0 {
			w.m.event(pod, api.EventTypeNormal, "Pulling", "Pulling image %q: layer %s (%d bytes)", image, shortDigest(pp.Digest), pp.Size)
		}
	})
	if err != nil {
		c.waitReason, c.waitMsg = reasonErrImagePull, err.Error()
		w.m.event(pod, api.EventTypeWarning, "Failed", "Failed to pull image %q: %v", image, err)
		w.m.event(pod, api.EventTypeWarning, "Failed", "Error: %s", reasonErrImagePull)
		return err
	}
	d := time.Since(t0).Round(time.Millisecond)
	w.m.event(pod, api.EventTypeNormal, "Pulled", "Successfully pulled image %q in %v. Image size: %d bytes.", image, d, info.Size)
	return nil
}

// pullBackOff is the waiting reason while a failed pull waits for its
// retry: ErrImagePull turns into ImagePullBackOff, with a BackOff event.
func (w *podWorker) pullBackOff(pod *api.Pod, c *ctr) {
	if c.waitReason != reasonErrImagePull {
		return
	}
	c.waitReason = reasonImagePullBackOff
	c.waitMsg = fmt.Sprintf("Back-off pulling image %q", c.spec.Image)
	w.m.event(pod, api.EventTypeNormal, "BackOff", "%s", c.waitMsg)
}

func isLayer(mediaType string) bool {
	switch mediaType {
	case "application/vnd.oci.image.layer.v1.tar", "application/vnd.oci.image.layer.v1.tar+gzip",
		"application/vnd.oci.image.layer.v1.tar+zstd", "application/vnd.docker.image.rootfs.diff.tar.gzip":
		return true
	}
	return false
}

func shortDigest(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
