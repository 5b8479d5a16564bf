package cli

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestImageBuildFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    ImageBuildOptions
		wantErr string
	}{
		{name: "self import", args: []string{"--self", "--name", "skiff.local/netexec:dev", "--import"},
			want: ImageBuildOptions{Name: "skiff.local/netexec:dev", Self: true, Import: true, Format: "oci"}},
		{name: "files to a docker archive", args: []string{"--name", "a:b", "--file", "/bin/x:/x", "--file", "/y", "--entrypoint", "/x,-v", "--cmd", "serve", "--env", "A=1,2", "-o", "out.tar", "--format", "docker"},
			want: ImageBuildOptions{Name: "a:b", Files: []string{"/bin/x:/x", "/y"}, Entrypoint: []string{"/x", "-v"}, Cmd: []string{"serve"}, Env: []string{"A=1,2"}, Output: "out.tar", Format: "docker"}},
		{name: "no name", args: []string{"--self", "--import"}, wantErr: "--name"},
		{name: "nothing to pack", args: []string{"--name", "a", "--import"}, wantErr: "--self or"},
		{name: "nowhere to go", args: []string{"--name", "a", "--self"}, wantErr: "-o FILE or --import"},
		{name: "bad format", args: []string{"--name", "a", "--self", "-o", "x", "--format", "zip"}, wantErr: "--format"},
		{name: "bad file", args: []string{"--name", "a", "--file", ":/x", "-o", "x"}, wantErr: "--file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *ImageBuildOptions
			var gotOpts ImageOptions
			root := NewRoot(Runners{Image: ImageRunners{Build: func(_ context.Context, o ImageOptions, b ImageBuildOptions, _ io.Writer) error {
				got, gotOpts = &b, o
				return nil
			}}}, &bytes.Buffer{})
			root.SetArgs(append([]string{"image", "build"}, tc.args...))
			root.SetErr(&bytes.Buffer{})
			err := root.ExecuteContext(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil {
					t.Fatalf("err %v (runner called: %v), want %q", err, got != nil, tc.wantErr)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("got %+v, %v", got, err)
			}
			if got.Name != tc.want.Name || got.Self != tc.want.Self || got.Import != tc.want.Import || got.Format != tc.want.Format ||
				got.Output != tc.want.Output || !slices.Equal(got.Files, tc.want.Files) || !slices.Equal(got.Entrypoint, tc.want.Entrypoint) ||
				!slices.Equal(got.Cmd, tc.want.Cmd) || !slices.Equal(got.Env, tc.want.Env) {
				t.Fatalf("got %+v, want %+v", *got, tc.want)
			}
			if gotOpts.Namespace != "skiff" || gotOpts.Socket != "" || len(gotOpts.DataDirs) != 2 {
				t.Fatalf("image options: %+v", gotOpts)
			}
		})
	}
}

func TestImageVerbsFlags(t *testing.T) {
	var calls []string
	var opts ImageOptions
	rec := func(verb string) func(context.Context, ImageOptions, []string, io.Writer) error {
		return func(_ context.Context, o ImageOptions, args []string, _ io.Writer) error {
			calls, opts = append(calls, verb+" "+strings.Join(args, " ")), o
			return nil
		}
	}
	r := Runners{Image: ImageRunners{Import: rec("import"), Pull: rec("pull"), Remove: rec("rm"),
		List: func(_ context.Context, o ImageOptions, _ io.Writer) error {
			calls, opts = append(calls, "ls"), o
			return nil
		}}}
	for _, args := range [][]string{
		{"image", "import", "a.tar", "b.tar", "--containerd-socket", "/run/c.sock", "--namespace", "ns"},
		{"image", "ls", "--data-dir", "/d1,/d2"},
		{"image", "pull", "127.0.0.1:5000/x:v1"},
		{"image", "rm", "x"},
	} {
		root := NewRoot(r, &bytes.Buffer{})
		root.SetArgs(args)
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if args[1] == "import" && (opts.Socket != "/run/c.sock" || opts.Namespace != "ns") {
			t.Fatalf("import options: %+v", opts)
		}
		if args[1] == "ls" && !slices.Equal(opts.DataDirs, []string{"/d1", "/d2"}) {
			t.Fatalf("ls options: %+v", opts)
		}
	}
	if want := []string{"import a.tar b.tar", "ls", "pull 127.0.0.1:5000/x:v1", "rm x"}; !slices.Equal(calls, want) {
		t.Fatalf("calls %q, want %q", calls, want)
	}
	root := NewRoot(r, &bytes.Buffer{})
	root.SetArgs([]string{"image", "import"})
	root.SetErr(&bytes.Buffer{})
	if err := root.ExecuteContext(context.Background()); err == nil {
		t.Fatal("import without a file accepted")
	}
}
