package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/cap"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

func capMask(t *testing.T, names []string) string {
	t.Helper()
	var m uint64
	for _, n := range names {
		i := runtime.CapabilityNumber(n)
		if i < 0 {
			t.Fatalf("unknown capability %s", n)
		}
		m |= 1 << i
	}
	return fmt.Sprintf("%016x", m)
}

// securityLines is what the workload's `security` mode prints before its
// writes.
func securityLines(ids, prm, eff, bnd string, nnp, seccomp int) string {
	return fmt.Sprintf("%s\nCapPrm: %s\nCapEff: %s\nCapBnd: %s\nNoNewPrivs: %d\nSeccomp: %d\n", ids, prm, eff, bnd, nnp, seccomp)
}

// TestSecurityContextContainerd: runAsUser, runAsGroup and
// supplementalGroups are the process's ids; the bounding set is
// containerd's default plus the added less the dropped capabilities
// (the effective set empty for a non-root user), no_new_privs and the
// RuntimeDefault seccomp filter are on, the root is read-only (EROFS)
// while a volume stays writable; an exec gets the same. A root
// container has the default set as effective set; a privileged one this
// process's whole set.
func TestSecurityContextContainerd(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	pod := netnstest.New(t, "pod")
	vol := t.TempDir()
	if err := os.Chmod(vol, 0o777); err != nil {
		t.Fatal(err)
	}
	uid, gid := int64(1000), int64(2000)
	sec := runtime.Security{RunAsUser: &uid, RunAsGroup: &gid, SupplementalGroups: []int64{3000}, NoNewPrivs: true,
		CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"KILL"}, Seccomp: "RuntimeDefault", ReadOnlyRootFS: true}
	mounts := []runtime.Mount{{Source: vol, Destination: "/vol"}}
	run := func(name string, sec runtime.Security, args ...string) string {
		t.Helper()
		sb := newSandbox(t, "sec-"+name, pod.Path)
		st := start(t, rt, sb, runtime.ContainerSpec{Name: "main", Image: testImage, Args: append([]string{"security"}, args...), Mounts: mounts, Security: sec})
		if fin := waitState(t, rt, st.ID, runtime.StateExited); fin.ExitCode != 0 {
			t.Fatalf("%s: exit %d; logs:\n%s", name, fin.ExitCode, logsOf(t, rt, st.ID))
		}
		return waitLogs(t, rt, st.ID, "write /skiff-ro-test")
	}
	var bnd []string
	for _, c := range runtime.DefaultCapabilities {
		if c != "CAP_KILL" {
			bnd = append(bnd, c)
		}
	}
	bnd = append(bnd, "CAP_NET_ADMIN")
	zero := fmt.Sprintf("%016x", 0)
	want := securityLines("uid=1000 gid=2000 groups=[2000 3000]", zero, zero, capMask(t, bnd), 1, 2)
	got := run("nonroot", sec, "/vol/x")
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "write /skiff-ro-test: open /skiff-ro-test: read-only file system\nwrite /vol/x: ok\n") {
		t.Fatalf("non-root container:\n%s\nwant it to start with:\n%s", got, want)
	}

	// An exec runs as the container's process does.
	sb := newSandbox(t, "sec-exec", pod.Path)
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "main", Image: testImage, Args: []string{"netexec"}, Mounts: mounts, Security: sec})
	waitState(t, rt, st.ID, runtime.StateRunning)
	code, out, err := rt.Exec(context.Background(), st.ID, []string{"/workload", "security"}, 10*time.Second)
	if err != nil || code != 0 || !strings.HasPrefix(string(out), want) {
		t.Fatalf("exec: %d, %v:\n%s\nwant it to start with:\n%s", code, err, out, want)
	}

	def := capMask(t, runtime.DefaultCapabilities)
	if got, want := run("root", runtime.Security{}), securityLines("uid=0 gid=0 groups=[0]", def, def, def, 0, 0); !strings.HasPrefix(got, want) {
		t.Fatalf("root container:\n%s\nwant it to start with:\n%s", got, want)
	}
	own, err := cap.Current()
	if err != nil {
		t.Fatal(err)
	}
	all := capMask(t, own)
	if got, want := run("privileged", runtime.Security{Privileged: true, CapDrop: []string{"ALL"}}), securityLines("uid=0 gid=0 groups=[0]", all, all, all, 0, 0); !strings.HasPrefix(got, want) {
		t.Fatalf("privileged container:\n%s\nwant it to start with:\n%s", got, want)
	}
	// A Localhost profile is the node's file: this one allows everything
	// but logs nothing, so seccomp mode 2 with the workload running.
	profile := filepath.Join(t.TempDir(), "allow.json")
	writeFile(t, profile, `{"defaultAction": "SCMP_ACT_ALLOW"}`)
	if got := run("localhost", runtime.Security{Seccomp: runtime.SeccompLocalhostPrefix + profile}); !strings.Contains(got, "Seccomp: 2\n") {
		t.Fatalf("Localhost profile:\n%s", got)
	}
}

// TestSecurityContextContainerdRefused: runAsNonRoot with a root or named
// image user, runAsUser 0, a missing Localhost profile and an unknown
// capability are a runtime.ConfigError naming the field; nothing is
// left behind.
func TestSecurityContextContainerdRefused(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	pod := netnstest.New(t, "pod")
	named := workloadImage("skiff.local/workload:user-named", e.workload)
	named.User = "app"
	if _, err := importImage(rt, "oci", named); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	before, err := rt.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, image string
		sec         runtime.Security
		field, msg  string
	}{
		{"image root", testImage, runtime.Security{RunAsNonRoot: true}, "securityContext.runAsNonRoot", "container has runAsNonRoot and image will run as root"},
		{"image user name", named.Name, runtime.Security{RunAsNonRoot: true}, "securityContext.runAsNonRoot", "image has non-numeric user (app), cannot verify user is non-root"},
		{"runAsUser 0", named.Name, runtime.Security{RunAsNonRoot: true, RunAsUser: &zero}, "securityContext.runAsUser", "runAsUser breaks non-root policy"},
		{"missing profile", testImage, runtime.Security{Seccomp: runtime.SeccompLocalhostPrefix + "/nonexistent/p.json"}, "securityContext.seccompProfile.localhostProfile", "no such file"},
		{"unknown capability", testImage, runtime.Security{CapDrop: []string{"NOPE"}}, "securityContext.capabilities.drop", "unknown capability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, "refused", pod.Path)
			_, err := rt.Start(context.Background(), sb, runtime.ContainerSpec{Name: "main", Image: tc.image, Args: []string{"print"}, Security: tc.sec})
			var ce *runtime.ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field || !strings.Contains(ce.Msg, tc.msg) {
				t.Fatalf("Start: %v, want a ConfigError on %s saying %q", err, tc.field, tc.msg)
			}
		})
	}
	after, err := rt.List(context.Background())
	if err != nil || len(after) != len(before) || !slices.EqualFunc(after, before, func(a, b runtime.ContainerStatus) bool { return a.ID == b.ID }) {
		t.Fatalf("refused starts left containers: %d before, %d after (%v)", len(before), len(after), err)
	}
}
