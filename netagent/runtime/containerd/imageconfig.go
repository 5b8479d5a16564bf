package containerd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/core/mount"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/moby/sys/user"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// defaultPath is the environment of an image that sets none (containerd's
// and Docker's default).
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// withImageConfig applies an image config to a Linux spec as
// oci.WithImageConfig does, except for the argv (Start sets it from the
// pod): the image's env (or defaultPath) under what the spec already
// has, its working dir (or /), and its USER resolved in the container's
// rootfs with the user's supplementary groups (see imageUser).
//
// It does not call oci.WithImageConfig because that reaches containerd's
// internal/fsview, which executes a text/template. A reachable template
// execution calls reflect.Value.MethodByName, and then the Go linker must
// keep every exported method of every type the program can reach: the
// skiff binary was 7.5 MB larger, and every skiff process (the agent,
// each process-runtime pod) mapped ~3 MB more of it. `make vet`
// (hack/deadcode) fails when such a call becomes reachable again. The
// rootfs is read through a read-only temporary mount of the container's
// snapshot, as containerd does where fsview cannot open it.
func withImageConfig(cfg ocispec.ImageConfig) oci.SpecOpts {
	return func(ctx context.Context, client oci.Client, c *containers.Container, s *oci.Spec) error {
		if s.Process == nil {
			s.Process = &specs.Process{}
		}
		env := cfg.Env
		if len(env) == 0 {
			env = []string{defaultPath}
		}
		// What the spec has overrides the image, as in containerd.
		own := s.Process.Env
		s.Process.Env = slices.Clone(env)
		if err := oci.WithEnv(own)(ctx, client, c, s); err != nil {
			return err
		}
		s.Process.Cwd = cmp.Or(cfg.WorkingDir, "/")
		return withRootFS(ctx, client, c, func(root fs.FS) error {
			u, err := imageUser(root, cfg.User)
			if err != nil {
				return err
			}
			s.Process.User.UID, s.Process.User.GID, s.Process.User.AdditionalGids = u.UID, u.GID, u.AdditionalGids
			return nil
		})
	}
}

// withRootFS calls fn with the container's rootfs: its snapshot mounted
// read-only in a temporary directory (core/mount), opened as an os.Root.
func withRootFS(ctx context.Context, client oci.Client, c *containers.Container, fn func(fs.FS) error) error {
	if c.Snapshotter == "" || c.SnapshotKey == "" {
		return errors.New("the container has no snapshot to read its image's users from")
	}
	mounts, err := client.SnapshotService(c.Snapshotter).Mounts(ctx, c.SnapshotKey)
	if err != nil {
		return fmt.Errorf("rootfs mounts: %w", err)
	}
	return mount.WithReadonlyTempMount(ctx, mounts, func(dir string) error {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return err
		}
		defer root.Close()
		return fn(root.FS())
	})
}

// imageUser resolves an image's USER in its rootfs as containerd does
// (oci.WithUser, then oci.WithAdditionalGIDs):
//
//   - "" is root (0:0);
//   - "uid" takes its group from the uid's /etc/passwd entry, or 0 when it
//     has none; "name" must be in /etc/passwd;
//   - "user:group" takes the group as given, by number or by its name in
//     /etc/group (a name on either side must exist);
//   - the supplementary groups are those of /etc/group that list the user
//     by name (for a uid: the name its passwd entry gives, if any), other
//     than the user's own group; the primary group comes first.
//
// IDs must fit runc's limit (0 to MaxInt32).
func imageUser(root fs.FS, userstr string) (specs.User, error) {
	var u specs.User
	parts := strings.Split(userstr, ":")
	if len(parts) > 2 {
		return u, fmt.Errorf("image USER %q: want user or user:group", userstr)
	}
	name := "root"
	if userstr != "" {
		uid, isID, err := parseID(parts[0])
		if err != nil {
			return u, fmt.Errorf("image USER %q: uid %w", userstr, err)
		}
		var entry *user.User
		if isID {
			u.UID = uid
			e, err := oci.UserFromFS(root, func(e user.User) bool { return e.Uid == int(uid) })
			switch {
			case err == nil:
				entry = &e
			case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, oci.ErrNoUsersFound):
				return u, fmt.Errorf("image USER %q: %w", userstr, err)
			}
		} else {
			e, err := oci.UserFromFS(root, func(e user.User) bool { return e.Name == parts[0] })
			if err != nil {
				return u, fmt.Errorf("image USER %q: user %q in the image's /etc/passwd: %w", userstr, parts[0], err)
			}
			entry = &e
			u.UID = uint32(e.Uid)
		}
		name = ""
		if entry != nil {
			name, u.GID = entry.Name, uint32(entry.Gid)
		}
		if len(parts) == 2 {
			if u.GID, err = imageGroup(root, parts[1]); err != nil {
				return u, fmt.Errorf("image USER %q: %w", userstr, err)
			}
		}
	}
	if name != "" {
		// GIDFromFS hands every entry of /etc/group to the filter, in
		// order: collect the user's groups there (it then reports none
		// found, which is no error here).
		_, err := oci.GIDFromFS(root, func(g user.Group) bool {
			if g.Name != name && slices.Contains(g.List, name) {
				u.AdditionalGids = append(u.AdditionalGids, uint32(g.Gid))
			}
			return false
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, oci.ErrNoGroupsFound) {
			return u, fmt.Errorf("image USER %q: %w", userstr, err)
		}
	}
	if !slices.Contains(u.AdditionalGids, u.GID) {
		u.AdditionalGids = append([]uint32{u.GID}, u.AdditionalGids...)
	}
	return u, nil
}

// imageGroup is a group given by number, or by its name in /etc/group.
func imageGroup(root fs.FS, group string) (uint32, error) {
	gid, isID, err := parseID(group)
	if err != nil {
		return 0, fmt.Errorf("gid %w", err)
	}
	if isID {
		return gid, nil
	}
	gid, err = oci.GIDFromFS(root, func(g user.Group) bool { return g.Name == group })
	if err != nil {
		return 0, fmt.Errorf("group %q in the image's /etc/group: %w", group, err)
	}
	return gid, nil
}

// parseID reads a uid or gid: isID is false for a name.
func parseID(s string) (id uint32, isID bool, err error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, false, fmt.Errorf("%s out of range", s)
		}
		return 0, false, nil
	}
	if v < 0 || v > math.MaxInt32 {
		return 0, false, fmt.Errorf("%d out of range 0..%d", v, math.MaxInt32)
	}
	return uint32(v), true, nil
}
