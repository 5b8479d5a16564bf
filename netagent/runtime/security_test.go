package runtime

import (
	"errors"
	"slices"
	"testing"
)

func TestSecurityCapabilities(t *testing.T) {
	all := []string{"CAP_CHOWN", "CAP_NET_ADMIN", "CAP_SYS_ADMIN", "CAP_KILL"}
	def := sortCaps(slices.Clone(DefaultCapabilities))
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(def), func(c string) bool { return slices.Contains(drop, c) })
	}
	for _, tc := range []struct {
		name string
		sec  Security
		want []string
		bad  string // the ConfigError's field
	}{
		{name: "default", want: def},
		{name: "add one", sec: Security{CapAdd: []string{"NET_ADMIN"}}, want: sortCaps(append(slices.Clone(def), "CAP_NET_ADMIN"))},
		{name: "lower case", sec: Security{CapAdd: []string{"net_admin"}}, want: sortCaps(append(slices.Clone(def), "CAP_NET_ADMIN"))},
		{name: "drop one", sec: Security{CapDrop: []string{"NET_RAW"}}, want: without("CAP_NET_RAW")},
		{name: "drop wins over add", sec: Security{CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"NET_ADMIN", "KILL"}}, want: without("CAP_KILL")},
		{name: "drop ALL then add", sec: Security{CapDrop: []string{"ALL"}, CapAdd: []string{"NET_BIND_SERVICE"}}, want: []string{"CAP_NET_BIND_SERVICE"}},
		{name: "drop ALL", sec: Security{CapDrop: []string{"all"}}, want: nil},
		{name: "add ALL minus one", sec: Security{CapAdd: []string{"ALL"}, CapDrop: []string{"CHOWN"}}, want: []string{"CAP_KILL", "CAP_NET_ADMIN", "CAP_SYS_ADMIN"}},
		{name: "privileged ignores drop", sec: Security{Privileged: true, CapDrop: []string{"ALL"}}, want: sortCaps(slices.Clone(all))},
		{name: "unknown add", sec: Security{CapAdd: []string{"NET_ADMN"}}, bad: "securityContext.capabilities.add"},
		{name: "prefixed name is unknown, as in CRI", sec: Security{CapDrop: []string{"CAP_KILL"}}, bad: "securityContext.capabilities.drop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.sec.Capabilities(all)
			if tc.bad != "" {
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Field != tc.bad {
					t.Fatalf("err = %v, want a ConfigError on %s", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("caps = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRunAsNonRootError(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name string
		sec  Security
		user string // image USER
		want string // "" no error
	}{
		{name: "not asked", user: "", want: ""},
		{name: "image root", sec: Security{RunAsNonRoot: true}, user: "", want: "securityContext.runAsNonRoot: container has runAsNonRoot and image will run as root"},
		{name: "image uid 0", sec: Security{RunAsNonRoot: true}, user: "0:10", want: "securityContext.runAsNonRoot: container has runAsNonRoot and image will run as root"},
		{name: "image uid", sec: Security{RunAsNonRoot: true}, user: "1000", want: ""},
		{name: "image name", sec: Security{RunAsNonRoot: true}, user: "nobody:nogroup", want: "securityContext.runAsNonRoot: container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root"},
		{name: "runAsUser wins", sec: Security{RunAsNonRoot: true, RunAsUser: i(1)}, user: "", want: ""},
		{name: "runAsUser 0", sec: Security{RunAsNonRoot: true, RunAsUser: i(0)}, user: "1000", want: "securityContext.runAsUser: container's runAsUser breaks non-root policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uid, name := ImageUserID(tc.user)
			err := tc.sec.RunAsNonRootError(uid, name)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.As(err, new(*ConfigError)) {
					t.Fatalf("%v is not a ConfigError", err)
				}
			}
			if got != tc.want {
				t.Fatalf("err = %q, want %q", got, tc.want)
			}
		})
	}
}
