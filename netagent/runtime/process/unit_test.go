package process

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

func TestParseStat(t *testing.T) {
	rest := " 1 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10"
	tests := []struct {
		name      string
		line      string
		wantState byte
		wantTicks uint64
		wantErr   bool
	}{
		{name: "plain", line: "42 (sleep) S" + rest, wantState: 'S', wantTicks: 123456},
		{name: "name with spaces and parens", line: "42 (a) b (c)) Z" + rest, wantState: 'Z', wantTicks: 123456},
		{name: "no name", line: "42 sleep S" + rest, wantErr: true},
		{name: "truncated", line: "42 (sleep) S 1 1", wantErr: true},
		{name: "bad ticks", line: "42 (sleep) S" + strings.Replace(rest, "123456", "x", 1), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := parseStat(tc.line)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parsed %+v, want an error", st)
				}
				return
			}
			if err != nil || st.state != tc.wantState || st.startTicks != tc.wantTicks {
				t.Fatalf("parseStat = %+v, %v; want state %c ticks %d", st, err, tc.wantState, tc.wantTicks)
			}
		})
	}
	// And the real thing: this process is alive, with a stable start time.
	me, err := readStat(os.Getpid())
	if err != nil || !alive(os.Getpid(), me.startTicks) || alive(os.Getpid(), me.startTicks+1) {
		t.Fatalf("readStat(self) = %+v, %v", me, err)
	}
}

func TestPodHostname(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b"
	tests := []struct{ name, in, want string }{
		{name: "short", in: "web-0", want: "web-0"},
		{name: "exactly 63", in: strings.Repeat("x", 63), want: strings.Repeat("x", 63)},
		{name: "cut to 63", in: strings.Repeat("x", 70), want: strings.Repeat("x", 63)},
		{name: "cut ends on a dash", in: long + "cdef", want: strings.Repeat("a", 62)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := podHostname(tc.in); got != tc.want {
				t.Fatalf("podHostname(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestInitArgsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		o    initOptions
		argv []string
	}{
		{name: "pod", o: initOptions{netns: "/run/netns/p", resolvConf: "/r", hosts: "/h", hostname: "p", workdir: "/w", syncFD: 3}, argv: []string{"/bin/app", "--flag", "-x"}},
		{name: "exec", o: initOptions{joinPid: 42, joinTicks: 99, syncFD: 3}, argv: []string{"sh", "-c", "echo --netns=x"}},
		{name: "host network", o: initOptions{syncFD: 3}, argv: []string{"--starts-with-dashes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.o.args(tc.argv)
			if args[0] != InitCommand {
				t.Fatalf("args %q do not start with %s", args, InitCommand)
			}
			o, argv, err := parseInitArgs(args[1:])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o, tc.o) || !slices.Equal(argv, tc.argv) {
				t.Fatalf("round trip: %+v %q, want %+v %q", o, argv, tc.o, tc.argv)
			}
		})
	}
	if _, _, err := parseInitArgs([]string{"--netns=/x", "--"}); err == nil {
		t.Fatal("no command: want an error")
	}
}

func TestLimitedBuffer(t *testing.T) {
	b := &limitedBuffer{max: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if string(b.Bytes()) != "abcde" {
		t.Fatalf("kept %q", b.Bytes())
	}
}

func TestStateFiles(t *testing.T) {
	dir := t.TempDir()
	rt := &Runtime{cfg: Config{StateDir: dir}}
	id, _ := newID()
	want := record{ID: id, PodUID: "u", Namespace: "ns", PodName: "p", Name: "c", Argv: []string{"a", "b"}, Env: []string{"X=1"},
		LogPath: "/l", Pid: 1 << 30, StartTicks: 7, StartedAt: time.Now().Round(0), State: runtime.StateExited, ExitCode: 3, FinishedAt: time.Now().Round(0)}
	if err := rt.save(&want); err != nil {
		t.Fatal(err)
	}
	// Leftovers an interrupted save or someone else may leave.
	writeFile(t, filepath.Join(dir, id+".json.tmp123"), "{half")
	other, _ := newID()
	writeFile(t, filepath.Join(dir, other+".json"), "not json")
	writeFile(t, filepath.Join(dir, "README"), "not state")

	got, err := New(Config{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.containers) != 1 {
		t.Fatalf("loaded %d containers, want 1", len(got.containers))
	}
	rec := got.containers[id].rec
	if rec.ID != want.ID || !slices.Equal(rec.Argv, want.Argv) || !slices.Equal(rec.Env, want.Env) || rec.Pid != want.Pid ||
		rec.StartTicks != 7 || rec.State != runtime.StateExited || rec.ExitCode != 3 || !rec.StartedAt.Equal(want.StartedAt) || !rec.FinishedAt.Equal(want.FinishedAt) {
		t.Fatalf("loaded %+v, want %+v", rec, want)
	}
	if _, err := os.Stat(filepath.Join(dir, id+".json.tmp123")); !os.IsNotExist(err) {
		t.Errorf("temporary file not cleaned up: %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New without a StateDir: want an error")
	}
}

func TestLookPathEnv(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tool"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "data"), "not executable")
	other := t.TempDir()
	tests := []struct {
		name, cmd, path, want string
		wantErr               bool
	}{
		{name: "found in PATH", cmd: "tool", path: other + ":" + dir, want: filepath.Join(dir, "tool")},
		{name: "not executable", cmd: "data", path: dir, wantErr: true},
		{name: "not in PATH", cmd: "tool", path: other, wantErr: true},
		{name: "no PATH", cmd: "tool", path: "", wantErr: true},
		{name: "a path is used as it is", cmd: filepath.Join(dir, "tool"), path: other, want: filepath.Join(dir, "tool")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"A=1"}
			if tc.path != "" {
				env = append(env, "PATH="+tc.path, "PATH="+other)
			}
			got, err := lookPathEnv(tc.cmd, env)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("lookPathEnv(%q, PATH=%q) = %q, %v; want %q, error %v", tc.cmd, tc.path, got, err, tc.want, tc.wantErr)
			}
		})
	}
	if got, err := lookPathEnv(SelfCommand, nil); err != nil || got == "" {
		t.Fatalf("lookPathEnv(%q) = %q, %v; want this binary", SelfCommand, got, err)
	}
}
