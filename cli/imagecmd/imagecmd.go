//go:build !skiff_nocontainerd

package imagecmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
)

// Runners are the `skiff image` verbs for cli.Runners.Image.
func Runners() cli.ImageRunners {
	return cli.ImageRunners{Import: Import, List: List, Pull: Pull, Remove: Remove, Build: Build}
}

// Socket is the containerd socket the verbs use: o.Socket, else the
// default one if it answers, else the first agent-managed one that
// answers.
func Socket(ctx context.Context, o cli.ImageOptions) (string, error) {
	if o.Socket != "" {
		return o.Socket, nil
	}
	tried := []string{containerd.DefaultSocket}
	for _, d := range o.DataDirs {
		tried = append(tried, containerd.DaemonSocket(filepath.Join(d, "containerd")))
	}
	for _, s := range tried {
		if containerd.SocketAnswers(ctx, s) {
			return s, nil
		}
	}
	return "", fmt.Errorf("image: no containerd answers at %s (use --containerd-socket)", strings.Join(tried, ", "))
}

func connect(ctx context.Context, o cli.ImageOptions) (*containerd.Runtime, error) {
	sock, err := Socket(ctx, o)
	if err != nil {
		return nil, err
	}
	rt, err := containerd.New(ctx, containerd.Config{Socket: sock, Namespace: o.Namespace})
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	return rt, nil
}

// Import loads each archive (tar or tar.gz; "-" is stdin) and prints
// "NAME DIGEST" per image.
func Import(ctx context.Context, o cli.ImageOptions, files []string, out io.Writer) error {
	rt, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer rt.Close()
	for _, f := range files {
		var rd io.Reader = os.Stdin
		if f != "-" {
			fh, err := os.Open(f)
			if err != nil {
				return fmt.Errorf("image import: %w", err)
			}
			defer fh.Close()
			rd = fh
		}
		rd, err := maybeGunzip(rd)
		if err != nil {
			return fmt.Errorf("image import %s: %w", f, err)
		}
		infos, err := rt.ImportImages(ctx, rd)
		if err != nil {
			return fmt.Errorf("image import %s: %w", f, err)
		}
		if len(infos) == 0 {
			return fmt.Errorf("image import %s: the archive names no image", f)
		}
		for _, i := range infos {
			fmt.Fprintf(out, "%s\t%s\n", i.Name, i.Digest)
		}
	}
	return nil
}

// maybeGunzip undoes gzip if the stream starts with its magic.
func maybeGunzip(rd io.Reader) (io.Reader, error) {
	var head [2]byte
	n, err := io.ReadFull(rd, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	rd = io.MultiReader(bytes.NewReader(head[:n]), rd)
	if n == 2 && head[0] == 0x1f && head[1] == 0x8b {
		return gzip.NewReader(rd)
	}
	return rd, nil
}

// List prints the images as a table.
func List(ctx context.Context, o cli.ImageOptions, out io.Writer) error {
	rt, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer rt.Close()
	imgs, err := rt.Images(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tDIGEST\tSIZE\tCREATED")
	for _, i := range imgs {
		d := strings.TrimPrefix(i.Digest, "sha256:")
		if len(d) > 12 {
			d = d[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", i.Name, d, humanSize(i.Size), i.Created.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// Pull pulls each ref, printing a line per blob it fetches, a line per
// blob in flight each second, and then "NAME DIGEST SIZE pulled in D".
func Pull(ctx context.Context, o cli.ImageOptions, refs []string, out io.Writer) error {
	rt, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer rt.Close()
	for _, ref := range refs {
		t0 := time.Now()
		info, err := rt.PullImage(ctx, ref, nil, func(p containerd.PullProgress) {
			if p.Fetched == 0 {
				fmt.Fprintf(out, "%s: fetching %s %s (%s)\n", p.Ref, kind(p.MediaType), short(p.Digest), humanSize(p.Size))
				return
			}
			fmt.Fprintf(out, "%s: %s %s: %s of %s\n", p.Ref, kind(p.MediaType), short(p.Digest), humanSize(p.Fetched), humanSize(p.Size))
		})
		if err != nil {
			return fmt.Errorf("image pull: %w", err)
		}
		fmt.Fprintf(out, "%s\t%s\t%s\tpulled in %v\n", info.Name, info.Digest, humanSize(info.Size), time.Since(t0).Round(time.Millisecond))
	}
	return nil
}

// Remove deletes each image.
func Remove(ctx context.Context, o cli.ImageOptions, refs []string, out io.Writer) error {
	rt, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer rt.Close()
	for _, ref := range refs {
		if err := rt.RemoveImage(ctx, ref); err != nil {
			return fmt.Errorf("image rm: %w", err)
		}
		full, _ := containerd.NormalizeRef(ref)
		fmt.Fprintln(out, full)
	}
	return nil
}

// DefaultPath is an image's PATH unless --env sets one.
const DefaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// SelfPath is a --self image's default PATH: DefaultPath then /, where
// skiff is, so that a pod command `skiff netexec ...` (the examples')
// finds /skiff under containerd as any command is found, and one manifest
// runs on both runtimes (the process runtime runs `skiff` as the agent's
// own binary).
const SelfPath = DefaultPath + ":/"

// BuildImage turns build flags into an image description.
func BuildImage(b cli.ImageBuildOptions) (ociarchive.Image, error) {
	img := ociarchive.Image{Name: b.Name, Entrypoint: b.Entrypoint, Cmd: b.Cmd, Env: b.Env, WorkingDir: b.WorkingDir}
	if b.Self {
		exe, err := os.Executable()
		if err != nil {
			return img, fmt.Errorf("image build --self: %w", err)
		}
		if err := requireStatic(exe); err != nil {
			return img, fmt.Errorf("image build --self: %w", err)
		}
		img.Files = append(img.Files, ociarchive.File{Path: "/skiff", Source: exe, Mode: 0o755})
		if len(img.Entrypoint) == 0 {
			img.Entrypoint = []string{"/skiff"}
		}
		if len(img.Cmd) == 0 {
			img.Cmd = []string{"netexec"}
		}
	}
	for _, f := range b.Files {
		host, dst, ok := strings.Cut(f, ":")
		if !ok || dst == "" {
			dst = "/" + filepath.Base(host)
		}
		st, err := os.Stat(host)
		if err != nil {
			return img, fmt.Errorf("image build: %w", err)
		}
		if !st.Mode().IsRegular() {
			return img, fmt.Errorf("image build: %s is not a regular file", host)
		}
		img.Files = append(img.Files, ociarchive.File{Path: path.Clean("/" + dst), Source: host, Mode: st.Mode().Perm()})
	}
	if len(img.Env) == 0 {
		img.Env = []string{DefaultPath}
		if b.Self {
			img.Env = []string{SelfPath}
		}
	}
	return img, nil
}

// requireStatic fails for an ELF file with a program interpreter (a
// dynamically linked executable).
func requireStatic(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; build it with CGO_ENABLED=0 (make build)", file)
		}
	}
	return nil
}

// Build writes the image as an archive (-o) and/or imports it.
func Build(ctx context.Context, o cli.ImageOptions, b cli.ImageBuildOptions, out io.Writer) error {
	img, err := BuildImage(b)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if b.Format == "docker" {
		err = ociarchive.WriteDocker(&buf, img)
	} else {
		_, err = ociarchive.WriteOCI(&buf, img)
	}
	if err != nil {
		return err
	}
	switch b.Output {
	case "":
	case "-":
		if _, err := out.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("image build: %w", err)
		}
	default:
		if err := os.WriteFile(b.Output, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("image build: %w", err)
		}
	}
	if !b.Import {
		return nil
	}
	rt, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer rt.Close()
	infos, err := rt.ImportImages(ctx, &buf)
	if err != nil {
		return fmt.Errorf("image build: %w", err)
	}
	if b.Output != "-" {
		for _, i := range infos {
			fmt.Fprintf(out, "%s\t%s\n", i.Name, i.Digest)
		}
	}
	return nil
}

func kind(mediaType string) string {
	switch {
	case strings.Contains(mediaType, "index"), strings.Contains(mediaType, "manifest.list"):
		return "index"
	case strings.Contains(mediaType, "manifest"):
		return "manifest"
	case strings.Contains(mediaType, "config"):
		return "config"
	case strings.Contains(mediaType, "layer"), strings.Contains(mediaType, "rootfs"):
		return "layer"
	}
	return mediaType
}

func short(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
