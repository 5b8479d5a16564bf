package containerd

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/containerd/v2/contrib/seccomp"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/cap"
	"github.com/containerd/containerd/v2/pkg/oci"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// withUser is the image config with its USER replaced as CRI does for a
// securityContext: runAsUser replaces the user (its group then comes
// from the image's /etc/passwd, or is 0), runAsGroup the group; the
// image's supplementary groups of that user are kept (imageUser).
func withUser(cfg ocispec.ImageConfig, s runtime.Security) ocispec.ImageConfig {
	if s.RunAsUser == nil && s.RunAsGroup == nil {
		return cfg
	}
	u, _, _ := strings.Cut(cfg.User, ":")
	if s.RunAsUser != nil {
		u = strconv.FormatInt(*s.RunAsUser, 10)
	}
	if u == "" {
		u = "0"
	}
	if s.RunAsGroup != nil {
		u += ":" + strconv.FormatInt(*s.RunAsGroup, 10)
	}
	cfg.User = u
	return cfg
}

// securityOpts are the spec options of a container's security context,
// applied after the mounts, as CRI's (internal/cri/server
// container_create_linux.go) are:
//
//   - runAsNonRoot: refused (runtime.ConfigError) when the user is root or
//     a name (the kubelet's verifyRunAsNonRoot, with the image's USER);
//   - supplementalGroups (with fsGroup) join the user's groups;
//   - readOnlyRootFilesystem: a read-only rootfs (the volumes keep their
//     own mode; /etc/hosts and resolv.conf are always read-only here);
//   - privileged: oci.WithPrivileged (every capability this process has,
//     no masked or read-only paths, writable sysfs and cgroupfs, no
//     seccomp) with every host device, all allowed; add and drop are
//     ignored, as in CRI;
//   - otherwise the capability set runtime.Security.Capabilities computes
//     from containerd's default one;
//   - allowPrivilegeEscalation false: no_new_privs; otherwise none (the
//     default spec's no_new_privs is cleared, as CRI does);
//   - seccomp: RuntimeDefault is containerd's default profile
//     (contrib/seccomp, computed from the capabilities), Localhost the
//     node's JSON file (a missing one is a ConfigError), Unconfined none.
func securityOpts(s runtime.Security, imageUser string) ([]oci.SpecOpts, error) {
	uid, name := runtime.ImageUserID(imageUser)
	if err := s.RunAsNonRootError(uid, name); err != nil {
		return nil, err
	}
	var opts []oci.SpecOpts
	if len(s.SupplementalGroups) > 0 {
		groups := slices.Clone(s.SupplementalGroups)
		opts = append(opts, func(_ context.Context, _ oci.Client, _ *containers.Container, sp *oci.Spec) error {
			for _, g := range groups {
				if !slices.Contains(sp.Process.User.AdditionalGids, uint32(g)) {
					sp.Process.User.AdditionalGids = append(sp.Process.User.AdditionalGids, uint32(g))
				}
			}
			return nil
		})
	}
	if s.ReadOnlyRootFS {
		opts = append(opts, oci.WithRootFSReadonly())
	}
	if s.Privileged {
		opts = append(opts, oci.WithPrivileged, oci.WithHostDevices, oci.WithAllDevicesAllowed)
	} else {
		own, err := cap.Current()
		if err != nil {
			return nil, fmt.Errorf("this process's capabilities: %w", err)
		}
		set, err := s.Capabilities(own)
		if err != nil {
			return nil, err
		}
		opts = append(opts, oci.WithCapabilities(set))
	}
	if s.NoNewPrivs {
		opts = append(opts, oci.WithNoNewPrivileges)
	} else {
		// containerd's default spec sets it; CRI clears it unless asked
		// (customopts.WithoutNoNewPrivileges).
		opts = append(opts, func(_ context.Context, _ oci.Client, _ *containers.Container, sp *oci.Spec) error {
			sp.Process.NoNewPrivileges = false
			return nil
		})
	}
	if s.Privileged {
		return opts, nil
	}
	switch {
	case s.Seccomp == "", s.Seccomp == "Unconfined":
	case s.Seccomp == "RuntimeDefault":
		opts = append(opts, seccomp.WithDefaultProfile())
	case strings.HasPrefix(s.Seccomp, runtime.SeccompLocalhostPrefix):
		path := strings.TrimPrefix(s.Seccomp, runtime.SeccompLocalhostPrefix)
		if _, err := os.Stat(path); err != nil {
			return nil, &runtime.ConfigError{Field: "securityContext.seccompProfile.localhostProfile", Msg: fmt.Sprintf("seccomp profile %s: %v", path, err)}
		}
		opts = append(opts, seccomp.WithProfile(path))
	default:
		return nil, &runtime.ConfigError{Field: "securityContext.seccompProfile", Msg: fmt.Sprintf("unknown seccomp profile %q", s.Seccomp)}
	}
	return opts, nil
}
