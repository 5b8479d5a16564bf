package netagent

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/atomicwriter"
)

// Volume ownership for a pod's fsGroup, as the kubelet's
// SetVolumeOwnership (pkg/volume/volume_linux.go): every file and
// directory of the volume gets group fsGroup (lchown), and g+rw (g+r for
// a read-only volume: configMap, secret, downwardAPI and projected ones);
// a directory also gets g+x and setgid, so what the container creates
// there inherits the group. Symlinks are chowned, never chmodded (a chmod
// would change their target's mode). With fsGroupChangePolicy
// OnRootMismatch nothing is walked when the volume's root already has the
// group, the permissions and setgid. emptyDir and persistentVolumeClaim
// volumes follow the pod's policy; the agent's rendered volumes are walked
// after each write (upstream passes no policy for them). hostPath volumes
// are never changed.

const (
	fsGroupRW   = fs.FileMode(0o660)
	fsGroupRO   = fs.FileMode(0o440)
	fsGroupExec = fs.FileMode(0o110)
)

// podFSGroup is the pod's fsGroup and fsGroupChangePolicy, if set.
func podFSGroup(pod *api.Pod) (*int64, *api.PodFSGroupChangePolicy) {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup, sc.FSGroupChangePolicy
	}
	return nil, nil
}

// setVolumeOwnership gives dir's tree to fsGroup (nil: nothing to do).
func setVolumeOwnership(dir string, fsGroup *int64, policy *api.PodFSGroupChangePolicy, readOnly bool) error {
	if fsGroup == nil {
		return nil
	}
	if policy != nil && *policy == api.FSGroupChangeOnRootMismatch && !ownershipMismatch(dir, *fsGroup, readOnly) {
		return nil
	}
	mask := fsGroupRW
	if readOnly {
		mask = fsGroupRO
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, int(*fsGroup)); err != nil {
			return fmt.Errorf("fsGroup %d: %w", *fsGroup, err)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m := info.Mode() | mask
		if d.IsDir() {
			m |= fs.ModeSetgid | fsGroupExec
		}
		if m == info.Mode() {
			return nil
		}
		if err := os.Chmod(p, m); err != nil {
			return fmt.Errorf("fsGroup %d: %w", *fsGroup, err)
		}
		return nil
	})
}

// ownershipMismatch is the kubelet's requiresPermissionChange: the root
// is not a directory of group gid with at least the group permissions and
// setgid.
func ownershipMismatch(dir string, gid int64, readOnly bool) bool {
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		return true
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int64(st.Gid) != gid {
		return true
	}
	want := fsGroupRW
	if readOnly {
		want = fsGroupRO
	}
	want |= fsGroupExec
	return info.Mode().Perm()&want != want || info.Mode()&fs.ModeSetgid == 0
}

// groupReadable is a rendered volume's payload with g+r on every file
// when the pod has an fsGroup: the mode setVolumeOwnership would give
// them, written as such so that the next refresh finds the files as the
// payload says and does not rewrite them.
func groupReadable(pod *api.Pod, payload map[string]atomicwriter.File) map[string]atomicwriter.File {
	if gid, _ := podFSGroup(pod); gid == nil {
		return payload
	}
	out := make(map[string]atomicwriter.File, len(payload))
	for p, f := range payload {
		f.Mode |= fsGroupRO
		out[p] = f
	}
	return out
}
