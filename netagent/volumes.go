package netagent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/atomicwriter"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Pod volumes, the kubelet's way, in <pod dir>/volumes/<kind>/<name>:
//
//   - configMap and secret: the object's keys (a ConfigMap's data and
//     binaryData; a Secret's data), or only items (key -> path, a listed
//     key that is missing fails the volume unless optional), each file
//     with the item's mode or defaultMode, written by package
//     atomicwriter; always mounted read-only. A missing object fails the
//     volume (the container waits in ContainerCreating, Event FailedMount,
//     retried as a config error) unless optional (then the volume is
//     empty). While the pod runs they are read again every 5s (a GET
//     each) and rewritten when they changed; an immutable object is not read again.
//     A Secret's volumes directory on the node is 0700.
//   - emptyDir: a directory (0777) that lives as long as the pod.
//   - hostPath: the node's path (created as a directory when missing and
//     the type is "" or DirectoryOrCreate, as an empty file for
//     FileOrCreate).
//
// A subPath mounts that path inside the volume, with its symlinks
// resolved when the container starts: such a mount is never updated (as
// in Kubernetes).

const (
	volKindConfigMap = "kubernetes.io~configmap"
	volKindSecret    = "kubernetes.io~secret"
	volKindEmptyDir  = "kubernetes.io~empty-dir"
)

// errVolume marks a container whose volumes could not be set up (it waits
// in ContainerCreating; Event FailedMount).
type errVolume struct{ msg string }

func (e errVolume) Error() string { return e.msg }

// objVolume is a configMap or secret volume written for the pod.
type objVolume struct {
	immutable bool
}

// volumeDir is where volume v of the pod lives on the node.
func (w *podWorker) volumeDir(v *api.Volume) (string, error) {
	base := filepath.Join(w.m.podDir(w.uid), "volumes")
	switch {
	case v.ConfigMap != nil:
		return filepath.Join(base, volKindConfigMap, v.Name), nil
	case v.Secret != nil:
		return filepath.Join(base, volKindSecret, v.Name), nil
	case v.EmptyDir != nil:
		return filepath.Join(base, volKindEmptyDir, v.Name), nil
	case v.HostPath != nil:
		return v.HostPath.Path, nil
	case v.DownwardAPI != nil:
		return filepath.Join(base, volKindDownwardAPI, v.Name), nil
	case v.Projected != nil:
		return filepath.Join(base, volKindProjected, v.Name), nil
	}
	return "", fmt.Errorf("volume %q: unsupported volume type", v.Name)
}

// containerMounts sets up the volumes c mounts and returns its mounts.
func (w *podWorker) containerMounts(ctx context.Context, pod *api.Pod, c *api.Container) ([]runtime.Mount, error) {
	var out []runtime.Mount
	for _, vm := range c.VolumeMounts {
		var v *api.Volume
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == vm.Name {
				v = &pod.Spec.Volumes[i]
			}
		}
		if v == nil {
			return nil, errVolume{fmt.Sprintf("unable to find volume %q", vm.Name)}
		}
		claimRO, claim := false, v.PersistentVolumeClaim != nil
		switch {
		case v.PersistentVolumeClaim != nil: // claims.go
			resolved, ro, err := w.claimVolume(ctx, pod, v)
			if err != nil {
				return nil, errVolume{fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", v.Name, err)}
			}
			v, claimRO = resolved, ro
		case v.NFS != nil:
			return nil, errVolume{fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", v.Name, nfsUnsupported(v.NFS))}
		}
		dir, err := w.volumeDir(v)
		if err != nil {
			return nil, errVolume{err.Error()}
		}
		if err := w.setUpVolume(ctx, pod, v, dir); err != nil {
			return nil, errVolume{fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", v.Name, err)}
		}
		if claim || v.EmptyDir != nil { // fsgroup.go; rendered volumes at each write
			gid, policy := podFSGroup(pod)
			if err := setVolumeOwnership(dir, gid, policy, claimRO); err != nil {
				return nil, errVolume{fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", v.Name, err)}
			}
		}
		src := dir
		ro := vm.ReadOnly || rendered(v) || claimRO
		if vm.SubPath != "" {
			if err := atomicwriter.ValidatePath(vm.SubPath); err != nil {
				return nil, errVolume{fmt.Sprintf("volume %q: subPath: %v", v.Name, err)}
			}
			src = filepath.Join(dir, vm.SubPath)
			if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) && (v.EmptyDir != nil || v.HostPath != nil) {
				if err := os.MkdirAll(src, 0o755); err != nil {
					return nil, errVolume{fmt.Sprintf("volume %q: subPath: %v", v.Name, err)}
				}
			}
			real, err := filepath.EvalSymlinks(src)
			if err != nil {
				return nil, errVolume{fmt.Sprintf("volume %q: subPath %s: %v", v.Name, vm.SubPath, err)}
			}
			// The resolved path must stay inside the volume.
			if rd, err := filepath.EvalSymlinks(dir); err != nil || !isWithin(rd, real) {
				return nil, errVolume{fmt.Sprintf("volume %q: subPath %s leaves the volume", v.Name, vm.SubPath)}
			}
			src = real
		}
		out = append(out, runtime.Mount{Source: src, Destination: vm.MountPath, ReadOnly: ro})
	}
	return out, nil
}

// rendered tells the volumes the agent writes (always mounted read-only,
// refreshed while the pod runs).
func rendered(v *api.Volume) bool {
	return v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil
}

func isWithin(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// setUpVolume makes volume v ready at dir.
func (w *podWorker) setUpVolume(ctx context.Context, pod *api.Pod, v *api.Volume, dir string) error {
	switch {
	case v.EmptyDir != nil:
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		return os.Chmod(dir, 0o777)
	case v.HostPath != nil:
		typ := ""
		if v.HostPath.Type != nil {
			typ = *v.HostPath.Type
		}
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			switch typ {
			case "", "DirectoryOrCreate":
				return os.MkdirAll(dir, 0o755)
			case "FileOrCreate":
				if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
					return err
				}
				f, err := os.OpenFile(dir, os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return err
				}
				return f.Close()
			}
			return fmt.Errorf("hostPath type check failed: %s does not exist", dir)
		} else if err != nil {
			return err
		}
		return nil
	}
	if ov, ok := w.volumes[v.Name]; ok && ov.immutable {
		return nil
	}
	_, err := w.writeObjectVolume(ctx, pod, v, dir)
	return err
}

// writeObjectVolume reads v's ConfigMap or Secret and writes it to dir; on
// a failure (a missing key or object that is not optional) dir keeps
// what it holds.
func (w *podWorker) writeObjectVolume(ctx context.Context, pod *api.Pod, v *api.Volume, dir string) (bool, error) {
	if v.DownwardAPI != nil || v.Projected != nil {
		changed, err := w.writeProjectedVolume(ctx, pod, v, dir) // projected.go
		if err == nil && changed {
			gid, _ := podFSGroup(pod)
			err = setVolumeOwnership(dir, gid, nil, true) // fsgroup.go
		}
		return changed, err
	}
	var data map[string][]byte
	var items []api.KeyToPath
	var mode *int32
	var optional, immutable bool
	var kind string
	switch {
	case v.ConfigMap != nil:
		kind, items, mode, optional = "configmap", v.ConfigMap.Items, v.ConfigMap.DefaultMode, isTrue(v.ConfigMap.Optional)
		cm, err := w.m.objects.configMap(ctx, pod.Namespace, v.ConfigMap.Name)
		switch {
		case err == nil:
			data = make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
			for k, s := range cm.Data {
				data[k] = []byte(s)
			}
			maps.Copy(data, cm.BinaryData)
			immutable = isTrue(cm.Immutable)
		case !(optional && isNotFound(err)):
			return false, err
		}
	case v.Secret != nil:
		kind, items, mode, optional = "secret", v.Secret.Items, v.Secret.DefaultMode, isTrue(v.Secret.Optional)
		s, err := w.m.objects.secret(ctx, pod.Namespace, v.Secret.SecretName)
		switch {
		case err == nil:
			data, immutable = s.Data, isTrue(s.Immutable)
		case !(optional && isNotFound(err)):
			return false, err
		}
		// Nobody else on the node reads a pod's Secrets.
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return false, err
		}
		if err := os.Chmod(filepath.Dir(dir), 0o700); err != nil {
			return false, err
		}
	default:
		return false, fmt.Errorf("volume %q is neither a configMap nor a secret", v.Name)
	}
	payload, err := volumePayload(kind, data, items, mode, optional)
	if err != nil {
		return false, err
	}
	changed, err := atomicwriter.Write(dir, groupReadable(pod, payload))
	if err != nil {
		return false, err
	}
	if changed {
		gid, _ := podFSGroup(pod)
		if err := setVolumeOwnership(dir, gid, nil, true); err != nil { // fsgroup.go
			return false, err
		}
	}
	if w.volumes == nil {
		w.volumes = map[string]objVolume{}
	}
	w.volumes[v.Name] = objVolume{immutable: immutable}
	return changed, nil
}

// volumePayload is the files of a configMap or secret volume, as the
// kubelet's MakePayload: every key (mode defaultMode), or only items, a
// missing listed key failing unless optional.
func volumePayload(kind string, data map[string][]byte, items []api.KeyToPath, defaultMode *int32, optional bool) (map[string]atomicwriter.File, error) {
	dm := fs.FileMode(0o644)
	if defaultMode != nil {
		dm = fs.FileMode(*defaultMode) & fs.ModePerm
	}
	out := make(map[string]atomicwriter.File, len(data))
	if len(items) == 0 {
		for k, v := range data {
			out[k] = atomicwriter.File{Data: v, Mode: dm}
		}
		return out, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("%s references non-existent %s key: %s", kind, map[string]string{"configmap": "config", "secret": "secret"}[kind], it.Key)
		}
		m := dm
		if it.Mode != nil {
			m = fs.FileMode(*it.Mode) & fs.ModePerm
		}
		out[filepath.Clean(it.Path)] = atomicwriter.File{Data: v, Mode: m}
	}
	return out, nil
}

// volumeRefresh is how often a running pod's configMap and secret volumes
// are read again (or the resync period, if shorter): one GET per volume.
const volumeRefresh = 5 * time.Second

// refreshVolumes reads the pod's configMap and secret volumes again (every
// volumeRefresh) and rewrites those that changed; a failure keeps what the
// volume holds. A volume is refreshed once it has been written (its
// ..data exists, also after an agent restart) and unless its object was
// immutable.
func (w *podWorker) refreshVolumes(ctx context.Context, pod *api.Pod, now time.Time) {
	if now.Before(w.volumesAt) {
		return
	}
	w.volumesAt = time.Time{}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !rendered(v) || w.volumes[v.Name].immutable {
			continue
		}
		w.volumesAt = now.Add(min(volumeRefresh, w.m.cfg.ResyncPeriod))
		dir, err := w.volumeDir(v)
		if err != nil {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, "..data")); err != nil {
			continue // not set up yet
		}
		changed, err := w.writeObjectVolume(ctx, pod, v, dir)
		if err != nil {
			w.log.Warn("volume refresh failed; keeping its files", "volume", v.Name, "err", err)
			continue
		}
		if changed {
			w.log.Debug("volume updated", "volume", v.Name)
		}
	}
}
