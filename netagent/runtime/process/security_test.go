package process

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

func TestContainerCreds(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	mask := func(names ...string) uint64 {
		var m uint64
		for _, n := range names {
			m |= 1 << runtime.CapabilityNumber(n)
		}
		return m
	}
	own := mask(append(slices.Clone(runtime.DefaultCapabilities), "CAP_NET_ADMIN", "CAP_SYS_ADMIN")...)
	def := mask(runtime.DefaultCapabilities...)
	for _, tc := range []struct {
		name string
		sec  runtime.Security
		want creds
		bad  string
	}{
		{name: "default: root, the default set", want: creds{Groups: []uint32{0}, Bounding: def}},
		{name: "user and groups", sec: runtime.Security{RunAsUser: i(1000), RunAsGroup: i(2000), SupplementalGroups: []int64{3000, 2000}},
			want: creds{UID: 1000, GID: 2000, Groups: []uint32{2000, 3000}, Bounding: def}},
		{name: "add beyond the agent's set is capped by it", sec: runtime.Security{CapAdd: []string{"NET_ADMIN", "SYS_TIME"}},
			want: creds{Groups: []uint32{0}, Bounding: def | mask("CAP_NET_ADMIN")}},
		{name: "add ALL is the agent's set", sec: runtime.Security{CapAdd: []string{"ALL"}}, want: creds{Groups: []uint32{0}, Bounding: own}},
		{name: "privileged keeps all, escalation implied", sec: runtime.Security{Privileged: true, NoNewPrivs: true},
			want: creds{Groups: []uint32{0}, Bounding: own, KeepAll: true}},
		{name: "no_new_privs and read-only", sec: runtime.Security{NoNewPrivs: true, ReadOnlyRootFS: true, CapDrop: []string{"ALL"}},
			want: creds{Groups: []uint32{0}, NoNewPrivs: true, ReadOnly: true}},
		{name: "unconfined seccomp is fine", sec: runtime.Security{Seccomp: "Unconfined"}, want: creds{Groups: []uint32{0}, Bounding: def}},
		{name: "RuntimeDefault refused", sec: runtime.Security{Seccomp: "RuntimeDefault"}, bad: "securityContext.seccompProfile"},
		{name: "runAsNonRoot without a user refused", sec: runtime.Security{RunAsNonRoot: true}, bad: "securityContext.runAsNonRoot"},
		{name: "runAsNonRoot with a user", sec: runtime.Security{RunAsNonRoot: true, RunAsUser: i(5)},
			want: creds{UID: 5, Groups: []uint32{0}, Bounding: def}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := containerCreds(tc.sec, own)
			if tc.bad != "" {
				var ce *runtime.ConfigError
				if !errors.As(err, &ce) || ce.Field != tc.bad {
					t.Fatalf("err = %v, want a ConfigError on %s", err, tc.bad)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("creds = %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

func TestReadOnlyMountSelection(t *testing.T) {
	info := []byte(`22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:5 / /dev rw,nosuid shared:2 - devtmpfs udev rw
24 23 0:21 / /dev/shm rw shared:3 - tmpfs tmpfs rw
25 22 0:22 / /proc rw shared:4 - proc proc rw
26 22 8:1 /var/lib/x /data\040dir rw - ext4 /dev/sda1 rw
27 22 8:1 /var/lib/y /data\040dir/sub rw - ext4 /dev/sda1 rw
28 22 0:30 / /devices rw - tmpfs tmpfs rw
29 22 8:1 /etc/h /etc/hosts rw - ext4 /dev/sda1 rw
`)
	keep := readOnlyKeep([]runtime.Mount{{Destination: "/data dir"}, {Destination: "/cfg", ReadOnly: true}})
	var ro []string
	for _, mp := range mountPoints(info) {
		if !underAny(mp, keep) {
			ro = append(ro, mp)
		}
	}
	if want := []string{"/", "/devices", "/etc/hosts"}; !slices.Equal(ro, want) {
		t.Fatalf("made read-only: %q, want %q", ro, want)
	}
}
