package api

import (
	"regexp"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// sysctlNameRE is upstream's sysctl name format (pkg/apis/core/validation
// IsValidSysctlName): segments of [a-z0-9] with - and _ inside, joined by
// . or /.
var sysctlNameRE = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

const sysctlMaxLength = 253

// NormalizeSysctlName is a sysctl name in dot form: when its first
// separator is a slash ("net/ipv4/conf/eth0.100/forwarding"), slashes and
// dots swap, as the kubelet and runc read it.
func NormalizeSysctlName(name string) string {
	i := strings.IndexAny(name, "./")
	if i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}

// SysctlNamespace is the namespace a sysctl belongs to, "net" or "ipc",
// or "" when it is not namespaced (upstream's namespacedSysctls:
// kernel.shm*, kernel.msg*, kernel.sem and fs.mqueue.* are IPC, net.* is
// the network).
func SysctlNamespace(name string) string {
	name = NormalizeSysctlName(name)
	switch {
	case strings.HasPrefix(name, "net."):
		return "net"
	case name == "kernel.sem", strings.HasPrefix(name, "kernel.shm"), strings.HasPrefix(name, "kernel.msg"), strings.HasPrefix(name, "fs.mqueue."):
		return "ipc"
	}
	return ""
}

// validateSysctls is upstream's validateSysctls: a name of the sysctl
// format, not twice, and no net.* sysctl with hostNetwork nor IPC one
// with hostIPC (they would change the node's).
func validateSysctls(s *PodSpec, sysctls []Sysctl, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, sc := range sysctls {
		p := path.Index(i).Child("name")
		switch {
		case sc.Name == "":
			errs = append(errs, field.Required(p, ""))
			continue
		case len(sc.Name) > sysctlMaxLength || !sysctlNameRE.MatchString(sc.Name):
			errs = append(errs, field.Invalid(p, sc.Name, "must have at most 253 characters and match regex "+sysctlNameRE.String()))
			continue
		}
		name := NormalizeSysctlName(sc.Name)
		if seen[name] {
			errs = append(errs, field.Duplicate(p, sc.Name))
		}
		seen[name] = true
		switch ns := SysctlNamespace(name); {
		case ns == "net" && s.HostNetwork:
			errs = append(errs, field.Invalid(p, sc.Name, "may not be specified when 'hostNetwork' is true"))
		case ns == "ipc" && s.HostIPC:
			errs = append(errs, field.Invalid(p, sc.Name, "may not be specified when 'hostIPC' is true"))
		}
	}
	return errs
}
