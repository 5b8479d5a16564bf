package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// capMask is /proc/<pid>/status's hex form of a set of capability names.
func capMask(t *testing.T, names ...string) string {
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

func without(list []string, drop ...string) []string {
	var out []string
	for _, c := range list {
		keep := true
		for _, d := range drop {
			keep = keep && c != d
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

const statusScript = `id -u; id -g; id -G; grep -E '^(CapPrm|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\t' ' '`

// TestSecurityContextNonRoot: runAsUser, runAsGroup and supplementalGroups
// are the process's ids; its bounding set is the default set plus the
// added and minus the dropped capabilities, its effective set empty (a
// non-root user, as under runc); no_new_privs is set; an exec gets the
// same.
func TestSecurityContextNonRoot(t *testing.T) {
	requireRoot(t)
	_, ns := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	sb := newSandbox(t, "sec", ns, "", "")
	uid, gid := int64(1000), int64(2000)
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "c", Command: []string{"sh", "-c", statusScript + "; echo done; exec sleep 60"},
		Security: runtime.Security{RunAsUser: &uid, RunAsGroup: &gid, SupplementalGroups: []int64{3000}, NoNewPrivs: true,
			CapAdd: []string{"NET_ADMIN"}, CapDrop: []string{"KILL"}}})
	waitLog(t, st.LogPath, "done")
	bnd := capMask(t, append(without(runtime.DefaultCapabilities, "CAP_KILL"), "CAP_NET_ADMIN")...)
	want := fmt.Sprintf("1000\n2000\n2000 3000\nCapPrm: %016x\nCapEff: %016x\nCapBnd: %s\nNoNewPrivs: 1\nSeccomp: 0\ndone\n", 0, 0, bnd)
	if got := readFile(t, st.LogPath); got != want {
		t.Fatalf("container output:\n%s\nwant:\n%s", got, want)
	}
	code, out, err := rt.Exec(t.Context(), st.ID, []string{"sh", "-c", statusScript}, 10*time.Second)
	if err != nil || code != 0 {
		t.Fatalf("exec: %d, %v: %s", code, err, out)
	}
	wantExec := strings.TrimSuffix(want, "done\n")
	if string(out) != wantExec {
		t.Fatalf("exec output:\n%s\nwant:\n%s", out, wantExec)
	}
	// kubectl exec's streaming path too.
	var stdout, stderr bytes.Buffer
	if code, err := rt.ExecStream(t.Context(), st.ID, []string{"sh", "-c", statusScript}, runtime.Streams{Stdout: &stdout, Stderr: &stderr}); err != nil || code != 0 || stdout.String() != wantExec {
		t.Fatalf("exec stream: %d, %v:\n%s\n(stderr %q)\nwant:\n%s", code, err, stdout.String(), stderr.String(), wantExec)
	}
}

// TestSecurityContextRootReadOnly: a root container gets the default set
// as its bounding and effective set (less what it drops); with
// readOnlyRootFilesystem a write to / fails with EROFS while its writable
// volume, /dev/null and /dev/shm stay writable and its read-only volume
// stays read-only; privileged keeps the agent's whole set.
func TestSecurityContextRootReadOnly(t *testing.T) {
	requireRoot(t)
	_, ns := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	sb := newSandbox(t, "secro", ns, "nameserver 10.0.0.10\n", "127.0.0.1 localhost\n")
	rw, ro := t.TempDir(), t.TempDir()
	rwDst := filepath.Join(t.TempDir(), "data")
	roDst := filepath.Join(t.TempDir(), "cfg")
	script := statusScript + `; for f in /skiff-ro-test /etc/hosts ` + roDst + `/x ` + rwDst + `/x /dev/shm/skiff-ro-test; do (echo > $f) 2>/dev/null && echo "$f writable" || echo "$f refused"; done; rm -f /dev/shm/skiff-ro-test; echo > /dev/null && echo devnull-ok; echo done`
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "c", Command: []string{"sh", "-c", script},
		Mounts:   []runtime.Mount{{Source: rw, Destination: rwDst}, {Source: ro, Destination: roDst, ReadOnly: true}},
		Security: runtime.Security{ReadOnlyRootFS: true, CapDrop: []string{"NET_RAW"}}})
	if fin := waitExited(t, rt, st.ID); fin.ExitCode != 0 {
		t.Fatalf("exit %d: %s", fin.ExitCode, readFile(t, st.LogPath))
	}
	set := capMask(t, without(runtime.DefaultCapabilities, "CAP_NET_RAW")...)
	want := fmt.Sprintf("0\n0\n0\nCapPrm: %s\nCapEff: %s\nCapBnd: %s\nNoNewPrivs: 0\nSeccomp: 0\n", set, set, set) +
		"/skiff-ro-test refused\n/etc/hosts refused\n" + roDst + "/x refused\n" + rwDst + "/x writable\n/dev/shm/skiff-ro-test writable\ndevnull-ok\ndone\n"
	if got := readFile(t, st.LogPath); got != want {
		t.Fatalf("container output:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat("/skiff-ro-test"); err == nil {
		t.Fatal("/skiff-ro-test exists on the node")
	}
	// Why / refused: EROFS, not a permission.
	st = start(t, rt, sb, runtime.ContainerSpec{Name: "erofs", Command: []string{"sh", "-c", "touch /skiff-ro-test"},
		Security: runtime.Security{ReadOnlyRootFS: true}})
	waitExited(t, rt, st.ID)
	if out := readFile(t, st.LogPath); !strings.Contains(out, "Read-only file system") {
		t.Fatalf("touch / said %q, want EROFS", out)
	}

	own, err := boundingSet()
	if err != nil {
		t.Fatal(err)
	}
	st = start(t, rt, sb, runtime.ContainerSpec{Name: "priv", Command: []string{"sh", "-c", statusScript},
		Security: runtime.Security{Privileged: true, CapDrop: []string{"ALL"}}})
	waitExited(t, rt, st.ID)
	all := fmt.Sprintf("%016x", own)
	if got, want := readFile(t, st.LogPath), fmt.Sprintf("0\n0\n0\nCapPrm: %s\nCapEff: %s\nCapBnd: %s\nNoNewPrivs: 0\nSeccomp: 0\n", all, all, all); got != want {
		t.Fatalf("privileged container:\n%s\nwant:\n%s", got, want)
	}
}

// TestSecurityContextRefused: what the process runtime cannot honour, or
// what the kubelet refuses, is a runtime.ConfigError naming the field, and
// nothing runs.
func TestSecurityContextRefused(t *testing.T) {
	requireRoot(t)
	_, ns := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	sb := newSandbox(t, "secno", ns, "", "")
	zero := int64(0)
	for _, tc := range []struct {
		name  string
		sec   runtime.Security
		field string
	}{
		{"runAsNonRoot as root", runtime.Security{RunAsNonRoot: true}, "securityContext.runAsNonRoot"},
		{"runAsNonRoot with runAsUser 0", runtime.Security{RunAsNonRoot: true, RunAsUser: &zero}, "securityContext.runAsUser"},
		{"seccomp RuntimeDefault", runtime.Security{Seccomp: "RuntimeDefault"}, "securityContext.seccompProfile"},
		{"seccomp Localhost", runtime.Security{Seccomp: runtime.SeccompLocalhostPrefix + "/etc/x.json"}, "securityContext.seccompProfile"},
		{"unknown capability", runtime.Security{CapAdd: []string{"NOPE"}}, "securityContext.capabilities.add"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.Start(t.Context(), sb, runtime.ContainerSpec{Name: "c", Command: []string{"true"}, Security: tc.sec})
			var ce *runtime.ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field {
				t.Fatalf("Start: %v, want a ConfigError on %s", err, tc.field)
			}
		})
	}
	if l, _ := rt.List(t.Context()); len(l) != 0 {
		t.Fatalf("refused containers are listed: %v", l)
	}
}
