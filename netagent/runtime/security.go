package runtime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ConfigError is a container a runtime refuses to start because of its
// spec, not because of the node: a securityContext it cannot honour (a
// seccomp profile without a loader, an unknown capability) or one the
// image breaks (runAsNonRoot with a root user). The agent shows it as the
// kubelet does a CreateContainerConfigError: the container waits with
// that reason, a Warning Event says why, and the start is tried again.
// Callers tell it apart with errors.As.
type ConfigError struct {
	// Field is the pod spec field at fault ("securityContext.runAsNonRoot"),
	// or empty.
	Field string
	Msg   string
}

func (e *ConfigError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// DefaultCapabilities is the capability set a container gets without a
// securityContext: containerd's (pkg/oci defaultUnixCaps), which CRI
// gives every unprivileged container. Both runtimes start from it.
var DefaultCapabilities = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
	"CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
	"CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// capNames are the Linux capabilities by number (linux/capability.h,
// up to CAP_CHECKPOINT_RESTORE, 40).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
	"CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
	"CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
	"CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// CapabilityNumber is the number of a capability name ("CAP_NET_ADMIN"),
// or -1.
func CapabilityNumber(name string) int {
	return slices.Index(capNames, name)
}

// CapabilityName is the name of capability n, or "" if it has none here.
func CapabilityName(n int) string {
	if n < 0 || n >= len(capNames) {
		return ""
	}
	return capNames[n]
}

// Capabilities is the set (bounding = permitted = effective for root)
// a container gets, as CRI computes it (containerd's
// internal/cri/opts WithCapabilities): privileged is every capability in
// all (the caller's own set; add and drop are ignored, as CRI ignores
// them); otherwise DefaultCapabilities, then "ALL" in CapAdd makes it
// all, "ALL" in CapDrop makes it empty, then the other CapAdd names are
// added and the other CapDrop names dropped (so a drop wins over an
// add). Names are given without "CAP_" (upper or lower case, as CRI
// upper-cases them); the result has it, in capability-number order. An
// unknown name is a ConfigError, as runc refuses it.
func (s Security) Capabilities(all []string) ([]string, error) {
	if s.Privileged {
		return sortCaps(slices.Clone(all)), nil
	}
	set := slices.Clone(DefaultCapabilities)
	norm := func(field string, names []string) ([]string, bool, error) {
		var out []string
		hasAll := false
		for _, n := range names {
			u := strings.ToUpper(n)
			if u == "ALL" {
				hasAll = true
				continue
			}
			c := "CAP_" + u
			if CapabilityNumber(c) < 0 {
				return nil, false, &ConfigError{Field: "securityContext.capabilities." + field, Msg: fmt.Sprintf("unknown capability %q", n)}
			}
			out = append(out, c)
		}
		return out, hasAll, nil
	}
	add, addAll, err := norm("add", s.CapAdd)
	if err != nil {
		return nil, err
	}
	drop, dropAll, err := norm("drop", s.CapDrop)
	if err != nil {
		return nil, err
	}
	if addAll {
		set = slices.Clone(all)
	}
	if dropAll {
		set = nil
	}
	for _, c := range add {
		if !slices.Contains(set, c) {
			set = append(set, c)
		}
	}
	set = slices.DeleteFunc(set, func(c string) bool { return slices.Contains(drop, c) })
	return sortCaps(set), nil
}

func sortCaps(set []string) []string {
	slices.SortFunc(set, func(a, b string) int { return CapabilityNumber(a) - CapabilityNumber(b) })
	return slices.Compact(set)
}

// SeccompLocalhostPrefix starts a Security.Seccomp that names a profile
// file of the node: "Localhost/" + its absolute path.
const SeccompLocalhostPrefix = "Localhost/"

// RunAsNonRootError is the kubelet's verdict (verifyRunAsNonRoot) on a
// container that must not run as root: uid is the user it will run as
// (nil: a user name, in name, that cannot be checked). Nil when s does not
// ask for a non-root user or the user is not root.
func (s Security) RunAsNonRootError(uid *int64, name string) error {
	if !s.RunAsNonRoot {
		return nil
	}
	if s.RunAsUser != nil {
		if *s.RunAsUser == 0 {
			return &ConfigError{Field: "securityContext.runAsUser", Msg: "container's runAsUser breaks non-root policy"}
		}
		return nil
	}
	switch {
	case uid != nil && *uid == 0:
		return &ConfigError{Field: "securityContext.runAsNonRoot", Msg: "container has runAsNonRoot and image will run as root"}
	case uid == nil && name != "":
		return &ConfigError{Field: "securityContext.runAsNonRoot", Msg: fmt.Sprintf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root", name)}
	}
	return nil
}

// ImageUserID splits an image config's USER ("uid", "name", "uid:gid",
// "") into the uid it names (nil for a name) and the name; "" is root.
func ImageUserID(user string) (*int64, string) {
	u, _, _ := strings.Cut(user, ":")
	if u == "" {
		return new(int64), ""
	}
	if n, err := strconv.ParseInt(u, 10, 64); err == nil {
		return &n, ""
	}
	return nil, u
}
