package netagent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Persistent volumes on the node, as the kubelet mounts them:
//
//   - A persistentVolumeClaim volume is resolved at container start: the
//     claim (a GET; the node authorizer lets a node read the claims its
//     pods reference) must be Bound with spec.volumeName, and the volume
//     (a GET; the node may read volumes bound to its pods' claims and
//     volumes pinned to it) must name the claim in its claimRef. A claim
//     that is missing, unbound or being deleted fails the volume: the
//     container waits in ContainerCreating with a FailedMount Event and
//     is tried again (1 s, 2 s, 4 s ... up to the resync period), never
//     crash-looping.
//   - A hostPath or local volume is then bind-mounted as a hostPath volume
//     of its path (hostPath with its type; local requires the path to
//     exist). A volume made by Skiff's local-path provisioner
//     (pv.kubernetes.io/provisioned-by: skiff.dev/local-path) has its
//     directory created 0777, as local-path-provisioner's setup does.
//     readOnly of the pod's volume or of the mount mounts it read-only.
//   - nfs (inline or as a volume's source) is refused with a clear
//     message when the kernel has no nfs filesystem (/proc/filesystems);
//     see docs/api.md for why this node cannot mount NFS.
//
// The cleanup of deleted local-path volumes (cleanupVolumes) scans
// <data dir>/storage: every directory is named as its volume; a volume
// being deleted that still carries the skiff.dev/local-path-cleanup
// finalizer has its directory removed and then the finalizer; a
// directory whose volume no longer exists is removed as well.

// Names shared with controller/persistentvolume (the netagent does not
// import controllers).
const (
	localPathProvisioner = "skiff.dev/local-path"
	localPathFinalizer   = "skiff.dev/local-path-cleanup"
	// AnnotationStorageDir is the Node annotation naming the directory of
	// the node's local-path volumes.
	AnnotationStorageDir = "skiff.dev/storage-dir"
	storageDirName       = "storage"
)

// storageDir holds the node's local-path volumes: <data dir>/storage.
func (a *Agent) storageDir() string { return filepath.Join(a.cfg.DataDir, storageDirName) }

// storageSource reads the claims and volumes of a pod's
// persistentVolumeClaim volumes.
type storageSource interface {
	claim(ctx context.Context, ns, name string) (*api.PersistentVolumeClaim, error)
	volume(ctx context.Context, name string) (*api.PersistentVolume, error)
}

func (o *apiObjects) claim(ctx context.Context, ns, name string) (*api.PersistentVolumeClaim, error) {
	var c api.PersistentVolumeClaim
	if err := o.api.Get(ctx, api.Lookup(api.Resources(), "v1", "persistentvolumeclaims"), ns, name, &c); err != nil {
		if client.IsNotFound(err) {
			return nil, errObjectNotFound{"persistentvolumeclaim", name}
		}
		return nil, err
	}
	return &c, nil
}

func (o *apiObjects) volume(ctx context.Context, name string) (*api.PersistentVolume, error) {
	var pv api.PersistentVolume
	if err := o.api.Get(ctx, api.Lookup(api.Resources(), "v1", "persistentvolumes"), "", name, &pv); err != nil {
		if client.IsNotFound(err) {
			return nil, errObjectNotFound{"persistentvolume", name}
		}
		return nil, err
	}
	return &pv, nil
}

// claimVolume resolves a persistentVolumeClaim volume to the hostPath
// volume to mount and whether it is read-only.
func (w *podWorker) claimVolume(ctx context.Context, pod *api.Pod, v *api.Volume) (*api.Volume, bool, error) {
	src := w.m.storage
	if src == nil {
		return nil, false, errors.New("this node reads no persistent volume claims")
	}
	name := v.PersistentVolumeClaim.ClaimName
	c, err := src.claim(ctx, pod.Namespace, name)
	if err != nil {
		return nil, false, err
	}
	if c.DeletionTimestamp != nil {
		return nil, false, fmt.Errorf("can't start pod because PVC %s/%s is being deleted", pod.Namespace, name)
	}
	if c.Status.Phase != api.ClaimBound || c.Spec.VolumeName == "" {
		return nil, false, fmt.Errorf("PVC %s/%s has non-bound phase (%q) or empty pvc.Spec.VolumeName (%q)",
			pod.Namespace, name, c.Status.Phase, c.Spec.VolumeName)
	}
	pv, err := src.volume(ctx, c.Spec.VolumeName)
	if err != nil {
		return nil, false, err
	}
	if r := pv.Spec.ClaimRef; r == nil || r.Namespace != c.Namespace || r.Name != c.Name || (r.UID != "" && r.UID != c.UID) {
		return nil, false, fmt.Errorf("persistentvolume %q is not bound to claim %s/%s", pv.Name, pod.Namespace, name)
	}
	ro := v.PersistentVolumeClaim.ReadOnly
	out := &api.Volume{Name: v.Name}
	switch {
	case pv.Spec.HostPath != nil:
		hp := *pv.Spec.HostPath
		if pv.Annotations[api.AnnDynamicallyProvisioned] == localPathProvisioner {
			if err := makeLocalPathDir(hp.Path); err != nil {
				return nil, false, err
			}
		}
		out.HostPath = &hp
	case pv.Spec.Local != nil:
		if _, err := os.Stat(pv.Spec.Local.Path); err != nil {
			return nil, false, fmt.Errorf("local volume %q: path %q does not exist", pv.Name, pv.Spec.Local.Path)
		}
		typ := "Directory"
		out.HostPath = &api.HostPathVolumeSource{Path: pv.Spec.Local.Path, Type: &typ}
	case pv.Spec.NFS != nil:
		return nil, false, nfsUnsupported(pv.Spec.NFS)
	default:
		return nil, false, fmt.Errorf("persistentvolume %q: this node mounts hostPath, local and nfs volumes only", pv.Name)
	}
	return out, ro, nil
}

// makeLocalPathDir creates a local-path volume's directory 0777 (the
// mode local-path-provisioner gives it, so that any container user may
// write), leaving an existing one as it is.
func makeLocalPathDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	return os.Chmod(dir, 0o777)
}

// procFilesystems is where the kernel lists the filesystems it mounts.
const procFilesystems = "/proc/filesystems"

// kernelHasNFS reports whether the kernel can mount NFS.
func kernelHasNFS() bool {
	b, err := os.ReadFile(procFilesystems)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[len(f)-1] == "nfs" || f[len(f)-1] == "nfs4") {
			return true
		}
	}
	return false
}

// nfsUnsupported is the error of an nfs volume: Skiff's node agent does
// not mount NFS (its kernels here have no NFS client; see docs/api.md).
func nfsUnsupported(n *api.NFSVolumeSource) error {
	if !kernelHasNFS() {
		return fmt.Errorf("nfs %s:%s: this node's kernel cannot mount NFS (no nfs filesystem in %s)", n.Server, n.Path, procFilesystems)
	}
	return fmt.Errorf("nfs %s:%s: the node agent does not mount NFS volumes", n.Server, n.Path)
}

// volumeWriter is what the cleanup needs of the API.
type volumeWriter interface {
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
}

// cleanupVolumes removes the directories of this node's local-path
// volumes that are being deleted (then their finalizer) or gone. A
// directory whose volume cannot be read (another error) is left for the
// next round.
func cleanupVolumes(ctx context.Context, a volumeWriter, dir string, log *slog.Logger) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	info := api.Lookup(api.Resources(), "v1", "persistentvolumes")
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		var pv api.PersistentVolume
		err := a.Get(ctx, info, "", name, &pv)
		switch {
		case client.IsNotFound(err):
		case err != nil:
			errs = append(errs, fmt.Errorf("volume %s: %w", name, err))
			continue
		case pv.DeletionTimestamp == nil || !slices.Contains(pv.Finalizers, localPathFinalizer):
			continue
		case pv.Spec.HostPath == nil || filepath.Clean(pv.Spec.HostPath.Path) != filepath.Join(dir, name):
			// Not this directory's volume: leave both alone.
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			errs = append(errs, fmt.Errorf("volume %s: remove its directory: %w", name, err))
			continue
		}
		log.Info("removed the directory of a deleted volume", "volume", name)
		if client.IsNotFound(err) {
			continue
		}
		pv.Finalizers = slices.DeleteFunc(pv.Finalizers, func(f string) bool { return f == localPathFinalizer })
		if err := a.Update(ctx, info, "", &pv); err != nil && !client.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("volume %s: remove finalizer: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// volumeCleanupPeriod is how often the agent looks for deleted local-path
// volumes.
const volumeCleanupPeriod = 5 * time.Second

// runVolumeCleanup runs cleanupVolumes every volumeCleanupPeriod until
// ctx ends.
func runVolumeCleanup(ctx context.Context, a volumeWriter, dir string, log *slog.Logger) {
	t := time.NewTicker(volumeCleanupPeriod)
	defer t.Stop()
	for {
		if err := cleanupVolumes(ctx, a, dir, log); err != nil && ctx.Err() == nil {
			log.Warn("volume cleanup", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
