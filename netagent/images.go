package netagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/distribution/reference"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/keyring"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Waiting reasons of image pulls, as the kubelet reports them.
const (
	reasonErrImagePull      = "ErrImagePull"
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonErrImageNeverPull = "ErrImageNeverPull"
)

// ImagePuller is what the agent needs of a runtime that has images
// (runtime/containerd does; the process runtime has none, and so ignores
// imagePullSecrets). The worker pulls a container's image per its
// imagePullPolicy before Start, with the credentials of the pod's
// imagePullSecrets (auth nil: anonymous).
type ImagePuller interface {
	ImagePresent(ctx context.Context, image string) (bool, error)
	PullImage(ctx context.Context, image string, auth *runtime.AuthConfig, progress func(runtime.PullProgress)) (runtime.ImageInfo, error)
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
	info, err := w.pullWithSecrets(ctx, p, pod, image, func(pp runtime.PullProgress) {
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

// pullWithSecrets pulls image as the kubelet does: the keyring of the
// pod's imagePullSecrets (a Secret that cannot be read is left out, with a
// FailedToRetrieveImagePullSecret event) gives the credentials for the
// image's repository; none is an anonymous pull, else each is tried in
// order until one pulls, and the error is all of theirs.
func (w *podWorker) pullWithSecrets(ctx context.Context, p ImagePuller, pod *api.Pod, image string, progress func(runtime.PullProgress)) (runtime.ImageInfo, error) {
	var secrets []*api.Secret
	var failed []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		s, err := w.m.objects.secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			w.log.Warn("unable to retrieve pull secret, the image pull may not succeed", "secret", ref.Name, "err", err)
			failed = append(failed, ref.Name)
			continue
		}
		secrets = append(secrets, s)
	}
	if len(failed) > 0 {
		w.m.event(pod, api.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(failed, ", "))
	}
	kr, err := keyring.FromSecrets(secrets)
	if err != nil {
		return runtime.ImageInfo{}, err
	}
	creds, ok := kr.Lookup(repository(image))
	if !ok {
		return p.PullImage(ctx, image, nil, progress)
	}
	var errs []string
	for i := range creds {
		info, err := p.PullImage(ctx, image, &creds[i], progress)
		if err == nil {
			return info, nil
		}
		errs = append(errs, err.Error())
	}
	if len(errs) == 1 {
		return runtime.ImageInfo{}, errors.New(errs[0])
	}
	return runtime.ImageInfo{}, fmt.Errorf("[%s]", strings.Join(errs, ", "))
}

// repository is the image's repository, fully qualified and without tag
// or digest ("busybox:1" is docker.io/library/busybox), what the keyring
// matches; an image that does not parse is matched as written.
func repository(image string) string {
	n, err := reference.ParseDockerRef(image)
	if err != nil {
		return image
	}
	return reference.TrimNamed(n).String()
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
