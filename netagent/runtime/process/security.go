package process

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// creds is what a container's processes (its main one and every exec)
// run with: a user, groups, a capability bounding set and no_new_privs,
// and whether its root is read-only. It is kept in the state file, so an
// exec after an agent restart gets the same.
type creds struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"` // supplementary, the primary group first
	// Bounding is the capability bounding set, a bit per capability
	// number; KeepAll (privileged) leaves the agent's own.
	Bounding   uint64 `json:"bounding"`
	KeepAll    bool   `json:"keepAll,omitempty"`
	NoNewPrivs bool   `json:"noNewPrivs,omitempty"`
	ReadOnly   bool   `json:"readOnlyRoot,omitempty"`
}

// containerCreds computes a container's creds from its security context,
// or the runtime.ConfigError that says what the process runtime cannot
// honour: a seccomp profile (RuntimeDefault or Localhost: there is no
// profile loader here), a root user with runAsNonRoot, an unknown
// capability. own is the agent's bounding set (a privileged container's,
// and what "ALL" means).
func containerCreds(s runtime.Security, own uint64) (creds, error) {
	var c creds
	if s.Seccomp != "" && s.Seccomp != "Unconfined" {
		return c, &runtime.ConfigError{Field: "securityContext.seccompProfile",
			Msg: fmt.Sprintf("the process runtime cannot apply seccomp profile %q (it has no seccomp loader; only Unconfined is possible): use the containerd runtime", s.Seccomp)}
	}
	var uid int64
	if s.RunAsUser != nil {
		uid = *s.RunAsUser
	}
	// The process runtime has no image: its user is runAsUser, or root.
	if err := s.RunAsNonRootError(&uid, ""); err != nil {
		return c, err
	}
	if s.RunAsGroup != nil {
		c.GID = uint32(*s.RunAsGroup)
	}
	c.UID = uint32(uid)
	c.Groups = []uint32{c.GID}
	for _, g := range s.SupplementalGroups {
		if !slices.Contains(c.Groups, uint32(g)) {
			c.Groups = append(c.Groups, uint32(g))
		}
	}
	names, err := s.Capabilities(capNames(own))
	if err != nil {
		return c, err
	}
	for _, n := range names {
		if i := runtime.CapabilityNumber(n); i >= 0 {
			c.Bounding |= 1 << i
		}
	}
	c.Bounding &= own
	c.KeepAll = s.Privileged
	// As the kubelet: privileged implies allowPrivilegeEscalation.
	c.NoNewPrivs = s.NoNewPrivs && !s.Privileged
	c.ReadOnly = s.ReadOnlyRootFS
	return c, nil
}

func capNames(mask uint64) []string {
	var out []string
	for i := range 64 {
		if mask&(1<<i) != 0 {
			if n := runtime.CapabilityName(i); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// boundingSet is the calling thread's capability bounding set.
func boundingSet() (uint64, error) {
	last, err := lastCap()
	if err != nil {
		return 0, err
	}
	var mask uint64
	for i := 0; i <= last; i++ {
		v, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(i), 0, 0, 0)
		if err != nil {
			return 0, fmt.Errorf("read capability %d of the bounding set: %w", i, err)
		}
		if v == 1 {
			mask |= 1 << i
		}
	}
	return mask, nil
}

func lastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// applyThread narrows the calling (locked, about to fork or exec) thread
// to c: capabilities outside c.Bounding leave its bounding set (root's
// children then get exactly c.Bounding as permitted and effective set, as
// a containerd container does; a non-root user's get none, as under runc
// without ambient capabilities), and no_new_privs is set. Both are per
// thread and inherited by a child. The user and groups are the fork's
// (SysProcAttr.Credential) or the exec's (setUser).
func applyThread(c creds) error {
	if !c.KeepAll {
		last, err := lastCap()
		if err != nil {
			return err
		}
		for i := 0; i <= last; i++ {
			if c.Bounding&(1<<i) == 0 {
				if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(i), 0, 0, 0); err != nil {
					return fmt.Errorf("drop capability %d from the bounding set: %w", i, err)
				}
			}
		}
	}
	if c.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("set no_new_privs: %w", err)
		}
	}
	return nil
}

// setUser gives the calling thread c's groups, group and user, with raw
// system calls that change this thread only (the one that will execve;
// Go's syscall.Setuid would change all of them, and refuses with cgo).
func setUser(c creds) error {
	groups := c.Groups
	var p unsafe.Pointer
	if len(groups) > 0 {
		p = unsafe.Pointer(&groups[0])
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(groups)), uintptr(p), 0); e != 0 {
		return fmt.Errorf("setgroups %v: %w", groups, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(c.GID), uintptr(c.GID), uintptr(c.GID)); e != 0 {
		return fmt.Errorf("setgid %d: %w", c.GID, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(c.UID), uintptr(c.UID), uintptr(c.UID)); e != 0 {
		return fmt.Errorf("setuid %d: %w", c.UID, e)
	}
	return nil
}

// makeRootReadOnly makes every mount of the calling thread's mount
// namespace read-only (MOUNT_ATTR_RDONLY through mount_setattr(2), one
// mount at a time, so a mount that was read-only stays so) except the
// mounts at or under keep: the container's writable volumes, and /dev,
// /proc and /sys, which stay as they were.
func makeRootReadOnly(keep []string) error {
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return err
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	for _, mp := range mountPoints(b) {
		if underAny(mp, keep) {
			continue
		}
		err := unix.MountSetattr(unix.AT_FDCWD, mp, unix.AT_SYMLINK_NOFOLLOW, attr)
		if err != nil && mp == "/" {
			return fmt.Errorf("make / read-only: %w", err)
		}
		// A mount another one hides, or one that went away: nothing
		// the container can reach.
	}
	return nil
}

// mountPoints are the mount points (field 5) of a mountinfo file, with
// its octal escapes undone.
func mountPoints(mountinfo []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		out = append(out, unescapeMountinfo(f[4]))
	}
	return out
}

func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// underAny reports whether path p is one of dirs or below one.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		d = strings.TrimRight(d, "/")
		if d == "" {
			return true // "/" keeps everything
		}
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// readOnlyKeep is what stays writable under a read-only root: /dev,
// /proc, /sys and the container's writable mounts.
func readOnlyKeep(mounts []runtime.Mount) []string {
	keep := []string{"/dev", "/proc", "/sys"}
	for _, m := range mounts {
		if !m.ReadOnly {
			keep = append(keep, m.Destination)
		}
	}
	return keep
}
