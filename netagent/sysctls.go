package netagent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/netns"
)

// SafeSysctls are the sysctls every pod may set, the kubelet's safe set
// (pkg/kubelet/sysctl/safe_sysctls.go): namespaced, and isolated from
// other pods. Others need --allowed-unsafe-sysctls.
var SafeSysctls = []string{
	"kernel.shm_rmid_forced",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_syncookies",
	"net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
}

// ReasonSysctlForbidden is the reason of a pod the node refuses for a
// sysctl (the kubelet's admission).
const ReasonSysctlForbidden = "SysctlForbidden"

// CheckUnsafeSysctls checks --allowed-unsafe-sysctls: each a sysctl name
// or a prefix ending in "*", namespaced (a node-wide sysctl cannot be set
// for one pod), as the kubelet's NewAllowlist refuses others.
func CheckUnsafeSysctls(patterns []string) error {
	for _, p := range patterns {
		name := strings.TrimSuffix(api.NormalizeSysctlName(p), "*")
		if api.SysctlNamespace(name) == "" {
			return fmt.Errorf("--allowed-unsafe-sysctls %q: not a namespaced sysctl (net.*, kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*)", p)
		}
	}
	return nil
}

// sysctlAllowed says whether a pod may set name: the safe set, or an
// --allowed-unsafe-sysctls name or prefix*.
func sysctlAllowed(name string, unsafe []string) bool {
	name = api.NormalizeSysctlName(name)
	for _, s := range SafeSysctls {
		if s == name {
			return true
		}
	}
	for _, p := range unsafe {
		p = api.NormalizeSysctlName(p)
		if pre, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, pre) || p == name {
			return true
		}
	}
	return false
}

// admitSysctls is the kubelet's sysctl admission of a pod: the message
// naming the first sysctl it may not set ("" when it may set them all).
func admitSysctls(pod *api.Pod, unsafe []string) string {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return ""
	}
	for _, s := range sc.Sysctls {
		if !sysctlAllowed(s.Name, unsafe) {
			return fmt.Sprintf("Pod forbidden sysctl: %q not allowlisted", s.Name)
		}
	}
	return ""
}

// applyNetSysctls writes the pod's net.* sysctls inside its network
// namespace (/proc/sys/net is the netns of the writing thread), which
// both runtimes' containers share; the IPC ones go to the runtime with
// each container (ipcSysctls).
func applyNetSysctls(pod *api.Pod, netnsPath string) error {
	sc := pod.Spec.SecurityContext
	if sc == nil || netnsPath == "" {
		return nil
	}
	var net []api.Sysctl
	for _, s := range sc.Sysctls {
		if api.SysctlNamespace(s.Name) == "net" {
			net = append(net, s)
		}
	}
	if len(net) == 0 {
		return nil
	}
	return netns.Do(netnsPath, func() error {
		for _, s := range net {
			p := sysctlPath(s.Name)
			if err := os.WriteFile(p, []byte(s.Value), 0o644); err != nil {
				return fmt.Errorf("sysctl %s=%s: %w", s.Name, s.Value, err)
			}
		}
		return nil
	})
}

// ipcSysctls are the pod's IPC sysctls, for the runtime to set in each
// container's IPC namespace (runtime.ContainerSpec.Sysctls).
func ipcSysctls(pod *api.Pod) map[string]string {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return nil
	}
	var out map[string]string
	for _, s := range sc.Sysctls {
		if api.SysctlNamespace(s.Name) == "ipc" {
			if out == nil {
				out = map[string]string{}
			}
			out[api.NormalizeSysctlName(s.Name)] = s.Value
		}
	}
	return out
}

// sysctlPath is a sysctl's file: its dot form with dots as directories
// and slashes (dots inside a segment, as in an interface name eth0.100)
// as dots.
func sysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, api.NormalizeSysctlName(name)))
}
