package kubectl

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/remotecommand"
)

type cpOptions struct {
	container  string
	noPreserve bool
}

func newCpCommand(g *globals) *cobra.Command {
	o := &cpOptions{}
	cmd := &cobra.Command{
		Use:   "cp SRC DEST",
		Short: "Copy files and directories to and from containers",
		Long: `Copy a file or a directory between the local machine and a container,
as kubectl cp does: tar through exec (tar cf - PATH in the container to
copy out, tar -xmf - -C DIR to copy in), so the container needs a tar.
One of SRC and DEST is [NAMESPACE/]POD:PATH.`,
		Example: `  skiff cp web-5d4f8b7c9-x2v4q:/etc/nginx/nginx.conf ./nginx.conf
  skiff cp ./site web-5d4f8b7c9-x2v4q:/usr/share/nginx/html -c nginx`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError("source and destination are required")
			}
			src, dst := parseCpSpec(args[0]), parseCpSpec(args[1])
			if (src.pod == "") == (dst.pod == "") {
				return usageError("one of src or dest must be a remote file specification (POD:PATH)")
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			remote := src
			if remote.pod == "" {
				remote = dst
			}
			if remote.ns != "" {
				s.ns = remote.ns
			}
			if remote.path == "" {
				return usageError("remote path cannot be empty")
			}
			pod, err := s.podFor(ctx, remote.pod)
			if err != nil {
				return err
			}
			c, err := (&logsOptions{container: o.container}).pickContainer(s, pod)
			if err != nil {
				return err
			}
			if src.pod != "" {
				return s.copyFromPod(ctx, pod, c, src.path, dst.path)
			}
			return s.copyToPod(ctx, pod, c, src.path, dst.path, o.noPreserve)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "the container (default: the only one, else the first)")
	f.BoolVar(&o.noPreserve, "no-preserve", false, "do not keep the ownership and permissions of the copied files in the container")
	return cmd
}

type cpSpec struct{ ns, pod, path string }

// parseCpSpec reads [NS/]POD:PATH; a local path has no pod (a path that
// starts with / or . is always local, as kubectl reads it).
func parseCpSpec(arg string) cpSpec {
	if strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, ".") {
		return cpSpec{path: arg}
	}
	before, p, ok := strings.Cut(arg, ":")
	if !ok {
		return cpSpec{path: arg}
	}
	if ns, pod, ok := strings.Cut(before, "/"); ok {
		return cpSpec{ns: ns, pod: pod, path: p}
	}
	return cpSpec{pod: before, path: p}
}

// execCapture runs cmd in the container with stdin, writing stdout to out.
func (s *session) execCapture(ctx context.Context, pod *api.Pod, container string, cmd []string, stdin io.Reader, out io.Writer) (int, string, error) {
	o := remotecommand.Options{Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: true}
	c, err := s.dialStream(ctx, pod.Namespace, pod.Name, "exec", container, o)
	if err != nil {
		return -1, "", err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	var errb bytes.Buffer
	code, err := c.Run(stdin, out, &errb)
	if err != nil {
		return -1, errb.String(), err
	}
	return code, errb.String(), nil
}

// copyToPod tars src (a file or a directory) as the entry named after
// dest's base and untars it in dest's directory; an existing directory
// dest gets src inside it, as kubectl does.
func (s *session) copyToPod(ctx context.Context, pod *api.Pod, container, src, dest string, noPreserve bool) error {
	if _, err := os.Stat(src); err != nil {
		return usageError("%s doesn't exist in local filesystem", src)
	}
	dest = path.Clean(dest)
	if code, _, err := s.execCapture(ctx, pod, container, []string{"test", "-d", dest}, nil, io.Discard); err == nil && code == 0 {
		dest = path.Join(dest, filepath.Base(src))
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(pw, src, path.Base(dest))) }()
	cmd := []string{"tar", "-xmf", "-"}
	if noPreserve {
		cmd = []string{"tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-"}
	}
	if d := path.Dir(dest); d != "" {
		cmd = append(cmd, "-C", d)
	}
	code, stderr, err := s.execCapture(ctx, pod, container, cmd, pr, s.env.Out)
	_ = pr.Close()
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code, Msg: fmt.Sprintf("%scommand terminated with exit code %d", stderr, code)}
	}
	return nil
}

// writeTar writes src as the tar entry name (a directory recursively).
func writeTar(w io.Writer, src, name string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = path.Join(name, filepath.ToSlash(rel))
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(tw, f)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// copyFromPod runs tar cf - src in the container and writes what it
// holds under src to dest (src's content becomes dest). Entries that
// would land outside dest, links and devices are skipped, as kubectl
// skips what escapes the destination.
func (s *session) copyFromPod(ctx context.Context, pod *api.Pod, container, src, dest string) error {
	pr, pw := io.Pipe()
	var stderr string
	var code int
	done := make(chan error, 1)
	go func() {
		var err error
		code, stderr, err = s.execCapture(ctx, pod, container, []string{"tar", "cf", "-", src}, nil, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	prefix := strings.TrimPrefix(path.Clean(src), "/")
	uerr := untar(pr, prefix, dest)
	if uerr == nil {
		_, _ = io.Copy(io.Discard, pr) // tar's padding after the archive's end
	}
	_ = pr.CloseWithError(errors.New("the copy ended"))
	err := <-done
	switch {
	case err != nil:
		return err
	case code != 0:
		return &ExitError{Code: code, Msg: fmt.Sprintf("%scommand terminated with exit code %d", stderr, code)}
	case uerr != nil:
		return uerr
	}
	return nil
}

func untar(r io.Reader, prefix, dest string) error {
	tr := tar.NewReader(r)
	seen := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			if !seen {
				return usageError("%s: no such file or directory in the container", "/"+prefix)
			}
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean(strings.TrimPrefix(h.Name, "/")), "./")
		rel, ok := strings.CutPrefix(name, prefix)
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			continue
		}
		seen = true
		target := filepath.Join(dest, filepath.FromSlash(rel))
		if r, err := filepath.Rel(dest, target); err != nil || r == ".." || strings.HasPrefix(r, "../") {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, fs.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
