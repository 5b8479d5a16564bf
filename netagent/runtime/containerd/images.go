package containerd

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	ctrd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/errdefs"
	"github.com/distribution/reference"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// ImageInfo describes one image of Skiff's namespace. It is defined in
// package runtime, so that the agent can name it without linking this
// package (a build with -tags skiff_nocontainerd).
type ImageInfo = runtime.ImageInfo

// PullProgress is one step of a pull, as it is reported to the caller's
// progress function: a blob (the index, a manifest, the config or a layer)
// about to be fetched (Fetched 0), or, every Config.PullProgressInterval,
// how far the fetch of a blob in flight is (0 < Fetched <= Size).
type PullProgress = runtime.PullProgress

// NormalizeRef is the full reference of an image name, as containerd
// stores it: "busybox" is docker.io/library/busybox:latest.
func NormalizeRef(ref string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("runtime/containerd: no image")
	}
	n, err := reference.ParseDockerRef(ref)
	if err != nil {
		return "", fmt.Errorf("runtime/containerd: image %q: %w", ref, err)
	}
	return n.String(), nil
}

// ImagePresent reports whether ref is in the image store.
func (r *Runtime) ImagePresent(ctx context.Context, ref string) (bool, error) {
	ctx = r.ctx(ctx)
	full, err := NormalizeRef(ref)
	if err != nil {
		return false, err
	}
	if _, err := r.client.ImageService().Get(ctx, full); err != nil {
		if errdefs.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("runtime/containerd: image %s: %w", full, err)
	}
	return true, nil
}

// PlainHTTPHosts is a Config.PlainHTTP: loopback (localhost, 127.0.0.1,
// ::1, any port) and each of hosts, an entry "host:port" matching that
// port only and a bare "host" any port (the agent's --insecure-registry).
func PlainHTTPHosts(hosts []string) func(string) (bool, error) {
	return func(host string) (bool, error) {
		if ok, _ := docker.MatchLocalhost(host); ok {
			return true, nil
		}
		name := host
		if h, _, err := net.SplitHostPort(host); err == nil {
			name = h
		}
		for _, e := range hosts {
			if e == host || e == name {
				return true, nil
			}
		}
		return false, nil
	}
}

// resolver reaches registries over HTTPS, and the hosts Config.PlainHTTP
// names (default: loopback) over plain HTTP. With auth, it answers the
// registry's challenge (Basic, or a Bearer token fetched with the
// credentials) for ref's own registry host only, never for a host it is
// redirected to.
func (r *Runtime) resolver(ref string, auth *runtime.AuthConfig) ctrd.RemoteOpt {
	plain := r.cfg.PlainHTTP
	if plain == nil {
		plain = docker.MatchLocalhost
	}
	hostOpts := []docker.RegistryOpt{docker.WithPlainHTTP(plain)}
	if auth != nil {
		hostOpts = append(hostOpts, docker.WithAuthorizer(docker.NewDockerAuthorizer(
			docker.WithAuthCreds(hostCreds(ref, *auth)))))
	}
	return ctrd.WithResolver(docker.NewResolver(docker.ResolverOptions{
		Hosts: docker.ConfigureDefaultRegistries(hostOpts...),
	}))
}

// hostCreds answers the authorizer's question "which credentials for
// host?": auth for ref's registry host, none for any other.
func hostCreds(ref string, auth runtime.AuthConfig) func(string) (string, string, error) {
	host := registryHost(ref)
	return func(h string) (string, string, error) {
		if h == host {
			return auth.Username, auth.Password, nil
		}
		return "", "", nil
	}
}

// registryHost is the host the resolver reaches for ref (a normalized
// reference): its domain, Docker Hub's being registry-1.docker.io.
func registryHost(ref string) string {
	host, _, _ := strings.Cut(ref, "/")
	if host == "docker.io" {
		return "registry-1.docker.io"
	}
	return host
}

// PullImage fetches ref (for this machine's platform) and unpacks it into
// the snapshotter, calling progress (when not nil) for each blob it is
// about to fetch. It returns the image's size. auth, when not nil, is the
// credential for ref's registry (see resolver); nil pulls anonymously.
func (r *Runtime) PullImage(ctx context.Context, ref string, auth *runtime.AuthConfig, progress func(PullProgress)) (ImageInfo, error) {
	ctx = r.ctx(ctx)
	full, err := NormalizeRef(ref)
	if err != nil {
		return ImageInfo{}, err
	}
	opts := []ctrd.RemoteOpt{ctrd.WithPullUnpack, r.resolver(full, auth)}
	if r.cfg.Snapshotter != "" {
		opts = append(opts, ctrd.WithPullSnapshotter(r.cfg.Snapshotter))
	}
	if progress != nil {
		// Each descriptor is reported as its fetch is dispatched; layers
		// are fetched by the unpacker, past the handlers, so they are
		// reported when their manifest lists them. The bytes of blobs in
		// flight are polled from the content store's ingests.
		var mu sync.Mutex
		seen := map[string]string{} // digest -> media type
		report := func(d ocispec.Descriptor) {
			mu.Lock()
			seen[d.Digest.String()] = d.MediaType
			mu.Unlock()
			progress(PullProgress{Ref: full, MediaType: d.MediaType, Digest: d.Digest.String(), Size: d.Size})
		}
		pctx, stop := context.WithCancel(ctx)
		polled := make(chan struct{})
		defer func() { stop(); <-polled }()
		go func() {
			defer close(polled)
			r.pollIngests(pctx, func(st content.Status) {
				dgst := ingestDigest(st)
				mu.Lock()
				mt, ok := seen[dgst]
				mu.Unlock()
				if ok && st.Offset > 0 {
					progress(PullProgress{Ref: full, MediaType: mt, Digest: dgst, Size: st.Total, Fetched: st.Offset})
				}
			})
		}()
		opts = append(opts, ctrd.WithImageHandlerWrapper(func(h images.Handler) images.Handler {
			return images.HandlerFunc(func(ctx context.Context, d ocispec.Descriptor) ([]ocispec.Descriptor, error) {
				report(d)
				children, err := h.Handle(ctx, d)
				if images.IsManifestType(d.MediaType) {
					for _, c := range children {
						if images.IsLayerType(c.MediaType) {
							report(c)
						}
					}
				}
				return children, err
			})
		}))
	}
	img, err := r.client.Pull(ctx, full, opts...)
	if err != nil {
		return ImageInfo{}, fmt.Errorf("runtime/containerd: pull %s: %w", full, err)
	}
	return r.info(ctx, img)
}

// ingestDigest is the blob an ingest writes: its expected digest, or the
// digest its ref ends with ("layer-sha256:...", as remotes.MakeRefKey
// names it).
func ingestDigest(st content.Status) string {
	if st.Expected != "" {
		return st.Expected.String()
	}
	if i := strings.Index(st.Ref, "sha256:"); i >= 0 {
		return st.Ref[i:]
	}
	return st.Ref
}

// pollIngests calls fn with every active ingest of the content store
// each Config.PullProgressInterval until ctx is done.
func (r *Runtime) pollIngests(ctx context.Context, fn func(content.Status)) {
	t := time.NewTicker(r.cfg.PullProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sts, err := r.client.ContentStore().ListStatuses(ctx)
		if err != nil {
			continue
		}
		for _, st := range sts {
			fn(st)
		}
	}
}

func (r *Runtime) info(ctx context.Context, img ctrd.Image) (ImageInfo, error) {
	size, err := img.Size(ctx)
	if err != nil {
		return ImageInfo{}, fmt.Errorf("runtime/containerd: image %s: size: %w", img.Name(), err)
	}
	return ImageInfo{Name: img.Name(), Digest: img.Target().Digest.String(), Size: size, Created: img.Metadata().CreatedAt}, nil
}

// unpack makes sure img has a snapshot to start containers from.
func (r *Runtime) unpack(ctx context.Context, img ctrd.Image) error {
	ok, err := img.IsUnpacked(ctx, r.cfg.Snapshotter)
	if err != nil {
		return fmt.Errorf("image %s: %w", img.Name(), err)
	}
	if ok {
		return nil
	}
	if err := img.Unpack(ctx, r.cfg.Snapshotter); err != nil {
		return fmt.Errorf("unpack %s: %w", img.Name(), err)
	}
	return nil
}

// ImportImages loads an OCI image layout or `docker save` archive (tar,
// optionally gzipped) from rd into the image store, unpacks what it can
// for this platform, and returns the names of the images it held.
func (r *Runtime) ImportImages(ctx context.Context, rd io.Reader) ([]ImageInfo, error) {
	ctx = r.ctx(ctx)
	imgs, err := r.client.Import(ctx, rd, ctrd.WithSkipDigestRef(func(name string) bool { return name != "" }))
	if err != nil {
		return nil, fmt.Errorf("runtime/containerd: import: %w", err)
	}
	var out []ImageInfo
	for _, im := range imgs {
		img := ctrd.NewImage(r.client, im)
		if err := r.unpack(ctx, img); err != nil {
			return nil, fmt.Errorf("runtime/containerd: import: %w", err)
		}
		info, err := r.info(ctx, img)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// Images lists the images of Skiff's namespace, sorted by name.
func (r *Runtime) Images(ctx context.Context) ([]ImageInfo, error) {
	ctx = r.ctx(ctx)
	imgs, err := r.client.ListImages(ctx)
	if err != nil {
		return nil, fmt.Errorf("runtime/containerd: list images: %w", err)
	}
	out := make([]ImageInfo, 0, len(imgs))
	for _, img := range imgs {
		info, err := r.info(ctx, img)
		if err != nil {
			// An image whose platform content is missing still lists.
			info = ImageInfo{Name: img.Name(), Digest: img.Target().Digest.String(), Created: img.Metadata().CreatedAt}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RemoveImage deletes an image from the store (its content is garbage
// collected by containerd).
func (r *Runtime) RemoveImage(ctx context.Context, ref string) error {
	ctx = r.ctx(ctx)
	full, err := NormalizeRef(ref)
	if err != nil {
		return err
	}
	if err := r.client.ImageService().Delete(ctx, full, images.SynchronousDelete()); err != nil {
		return fmt.Errorf("runtime/containerd: remove image %s: %w", full, err)
	}
	return nil
}

// DefaultPullPolicy is the pull policy Kubernetes gives a container that
// sets none: Always for an image tagged ":latest" or untagged (and not
// pinned by digest), IfNotPresent otherwise (runtime.DefaultPullPolicy).
func DefaultPullPolicy(image string) string { return runtime.DefaultPullPolicy(image) }
