package netagent

import (
	"path/filepath"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// effectiveSecurity is a container's security context as the kubelet
// computes it (pkg/securitycontext DetermineEffectiveSecurityContext and
// kuberuntime's security_context.go): the container's runAsUser,
// runAsGroup, runAsNonRoot and seccompProfile override the pod's; the
// groups are the pod's supplementalGroups with its fsGroup; no_new_privs
// is allowPrivilegeEscalation: false (privileged implies escalation, and
// the API refuses both together). A Localhost seccomp profile is a file
// under seccompRoot (<DataDir>/seccomp, as the kubelet's
// <root-dir>/seccomp).
func effectiveSecurity(pod *api.Pod, c *api.Container, seccompRoot string) runtime.Security {
	var s runtime.Security
	var sp *api.SeccompProfile
	if psc := pod.Spec.SecurityContext; psc != nil {
		s.RunAsUser, s.RunAsGroup = cloneInt(psc.RunAsUser), cloneInt(psc.RunAsGroup)
		s.RunAsNonRoot = psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
		s.SupplementalGroups = append(s.SupplementalGroups, psc.SupplementalGroups...)
		if psc.FSGroup != nil {
			s.SupplementalGroups = append(s.SupplementalGroups, *psc.FSGroup)
		}
		sp = psc.SeccompProfile
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			s.RunAsUser = cloneInt(sc.RunAsUser)
		}
		if sc.RunAsGroup != nil {
			s.RunAsGroup = cloneInt(sc.RunAsGroup)
		}
		if sc.RunAsNonRoot != nil {
			s.RunAsNonRoot = *sc.RunAsNonRoot
		}
		if sc.SeccompProfile != nil {
			sp = sc.SeccompProfile
		}
		s.Privileged = sc.Privileged != nil && *sc.Privileged
		s.ReadOnlyRootFS = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
		s.NoNewPrivs = !s.Privileged && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
		if caps := sc.Capabilities; caps != nil {
			s.CapAdd = append(s.CapAdd, caps.Add...)
			s.CapDrop = append(s.CapDrop, caps.Drop...)
		}
	}
	if sp != nil {
		switch sp.Type {
		case api.SeccompProfileTypeRuntimeDefault:
			s.Seccomp = string(api.SeccompProfileTypeRuntimeDefault)
		case api.SeccompProfileTypeLocalhost:
			if sp.LocalhostProfile != nil {
				s.Seccomp = runtime.SeccompLocalhostPrefix + filepath.Join(seccompRoot, filepath.Clean("/"+*sp.LocalhostProfile))
			}
		}
	}
	return s
}

func cloneInt(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
