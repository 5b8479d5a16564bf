package api

import (
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api/field"
)

func TestValidateSysctls(t *testing.T) {
	pod := func(hostNet, hostIPC bool, names ...string) *PodSpec {
		s := &PodSpec{HostNetwork: hostNet, HostIPC: hostIPC, SecurityContext: &PodSecurityContext{}}
		for _, n := range names {
			s.SecurityContext.Sysctls = append(s.SecurityContext.Sysctls, Sysctl{Name: n, Value: "1"})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		spec *PodSpec
		want string // "" valid
	}{
		{"safe", pod(false, false, "net.ipv4.ip_local_port_range", "kernel.shm_rmid_forced"), ""},
		{"slash form", pod(false, false, "net/ipv4/conf/eth0.100/forwarding"), ""},
		{"bad name", pod(false, false, "net..ipv4"), "spec.securityContext.sysctls[0].name"},
		{"upper case", pod(false, false, "Net.ipv4.x"), "spec.securityContext.sysctls[0].name"},
		{"empty", pod(false, false, ""), "Required"},
		{"duplicate in both forms", pod(false, false, "net.ipv4.tcp_syncookies", "net/ipv4/tcp_syncookies"), "sysctls[1].name: Duplicate"},
		{"net with hostNetwork", pod(true, false, "net.ipv4.tcp_syncookies"), "hostNetwork"},
		{"ipc with hostIPC", pod(false, true, "kernel.shm_rmid_forced"), "hostIPC"},
		{"net with hostIPC", pod(false, true, "net.ipv4.tcp_syncookies"), ""},
	} {
		errs := validateSysctls(tc.spec, tc.spec.SecurityContext.Sysctls, field.NewPath("spec", "securityContext", "sysctls"))
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: %v", tc.name, errs)
		case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, errs, tc.want)
		}
	}
	for in, want := range map[string]string{"net/ipv4/conf/eth0.100/forwarding": "net.ipv4.conf.eth0/100.forwarding", "net.ipv4.tcp_syncookies": "net.ipv4.tcp_syncookies"} {
		if got := NormalizeSysctlName(in); got != want {
			t.Errorf("NormalizeSysctlName(%q) = %q, want %q", in, got, want)
		}
	}
	for name, ns := range map[string]string{"net.core.somaxconn": "net", "kernel.msgmax": "ipc", "kernel.sem": "ipc", "fs.mqueue.msg_max": "ipc", "vm.swappiness": "", "kernel.semx": ""} {
		if got := SysctlNamespace(name); got != ns {
			t.Errorf("SysctlNamespace(%s) = %q, want %q", name, got, ns)
		}
	}
}
