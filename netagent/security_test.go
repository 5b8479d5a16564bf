package netagent

import (
	"reflect"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

func TestEffectiveSecurity(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	b := func(v bool) *bool { return &v }
	str := func(v string) *string { return &v }
	for _, tc := range []struct {
		name string
		pod  *api.PodSecurityContext
		ctr  *api.SecurityContext
		want runtime.Security
	}{
		{name: "none"},
		{name: "pod only",
			pod:  &api.PodSecurityContext{RunAsUser: i(1000), RunAsGroup: i(2000), RunAsNonRoot: b(true), SupplementalGroups: []int64{3000}, FSGroup: i(4000)},
			want: runtime.Security{RunAsUser: i(1000), RunAsGroup: i(2000), RunAsNonRoot: true, SupplementalGroups: []int64{3000, 4000}}},
		{name: "container overrides pod",
			pod:  &api.PodSecurityContext{RunAsUser: i(1000), RunAsGroup: i(2000), RunAsNonRoot: b(true), SeccompProfile: &api.SeccompProfile{Type: api.SeccompProfileTypeRuntimeDefault}},
			ctr:  &api.SecurityContext{RunAsUser: i(0), RunAsNonRoot: b(false), SeccompProfile: &api.SeccompProfile{Type: api.SeccompProfileTypeUnconfined}},
			want: runtime.Security{RunAsUser: i(0), RunAsGroup: i(2000)}},
		{name: "pod seccomp",
			pod:  &api.PodSecurityContext{SeccompProfile: &api.SeccompProfile{Type: api.SeccompProfileTypeRuntimeDefault}},
			want: runtime.Security{Seccomp: "RuntimeDefault"}},
		{name: "localhost seccomp under the root",
			ctr:  &api.SecurityContext{SeccompProfile: &api.SeccompProfile{Type: api.SeccompProfileTypeLocalhost, LocalhostProfile: str("p/audit.json")}},
			want: runtime.Security{Seccomp: "Localhost//data/seccomp/p/audit.json"}},
		{name: "no escalation",
			ctr:  &api.SecurityContext{AllowPrivilegeEscalation: b(false), ReadOnlyRootFilesystem: b(true), Capabilities: &api.Capabilities{Add: []string{"NET_ADMIN"}, Drop: []string{"ALL"}}},
			want: runtime.Security{NoNewPrivs: true, ReadOnlyRootFS: true, CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"ALL"}}},
		{name: "escalation allowed by default",
			ctr:  &api.SecurityContext{AllowPrivilegeEscalation: b(true)},
			want: runtime.Security{}},
		{name: "privileged",
			ctr:  &api.SecurityContext{Privileged: b(true)},
			want: runtime.Security{Privileged: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &api.Pod{Spec: api.PodSpec{SecurityContext: tc.pod, Containers: []api.Container{{Name: "c", SecurityContext: tc.ctr}}}}
			got := effectiveSecurity(pod, &pod.Spec.Containers[0], "/data/seccomp")
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
