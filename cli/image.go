package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// ImageOptions are the flags every `skiff image` verb shares: which
// containerd, and which namespace in it.
type ImageOptions struct {
	// Socket (--containerd-socket); "" tries the default socket, then a
	// containerd the agent runs under each --data-dir.
	Socket string
	// Namespace (--namespace) is the containerd namespace (default skiff,
	// the agent's).
	Namespace string
	// DataDirs (--data-dir) are where an agent-managed containerd is
	// looked for (<dir>/containerd/containerd.sock).
	DataDirs []string
}

// ImageBuildOptions are the flags of `skiff image build`.
type ImageBuildOptions struct {
	Name       string   // --name, the image reference
	Files      []string // --file HOST[:IMAGE_PATH] (repeatable)
	Self       bool     // --self: this skiff binary at /skiff, ENTRYPOINT [/skiff] CMD [netexec]
	Entrypoint []string // --entrypoint (repeatable, or comma-separated)
	Cmd        []string // --cmd
	Env        []string // --env K=V
	WorkingDir string   // --workdir
	Format     string   // --format oci|docker
	Output     string   // -o FILE; "-" is stdout
	Import     bool     // --import: load into containerd instead of (or as well as) writing
}

// ImageRunners run the `skiff image` verbs; out is stdout.
type ImageRunners struct {
	Import func(ctx context.Context, o ImageOptions, files []string, out io.Writer) error
	List   func(ctx context.Context, o ImageOptions, out io.Writer) error
	Pull   func(ctx context.Context, o ImageOptions, refs []string, out io.Writer) error
	Remove func(ctx context.Context, o ImageOptions, refs []string, out io.Writer) error
	Build  func(ctx context.Context, o ImageOptions, b ImageBuildOptions, out io.Writer) error
}

func newImageCommand(r ImageRunners) *cobra.Command {
	o := ImageOptions{Namespace: "skiff", DataDirs: []string{"/var/lib/skiff-agent", "/var/lib/skiff"}}
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Manage the images of the node's containerd (import archives for air-gapped nodes, pull, list, build)",
		Long: `image works on the containerd the node agent uses (--runtime containerd), in
Skiff's namespace of it ("skiff"): by default the one at
/run/containerd/containerd.sock, else the one an agent started itself under
<data-dir>/containerd.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.Socket, "containerd-socket", o.Socket, "containerd's socket (default: /run/containerd/containerd.sock, else <data-dir>/containerd/containerd.sock)")
	pf.StringVar(&o.Namespace, "namespace", o.Namespace, "containerd namespace")
	pf.StringSliceVar(&o.DataDirs, "data-dir", o.DataDirs, "agent data dirs to find an agent-managed containerd in")
	missing := func(verb string) error { return fmt.Errorf("image %s is not available in this build", verb) }
	cmd.AddCommand(&cobra.Command{
		Use:   "import FILE...",
		Short: "Load OCI image-layout or docker-save archives (tar or tar.gz; - is stdin) and print the images' names",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if r.Import == nil {
				return missing("import")
			}
			return r.Import(c.Context(), o, args, c.OutOrStdout())
		},
	}, &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the images",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if r.List == nil {
				return missing("ls")
			}
			return r.List(c.Context(), o, c.OutOrStdout())
		},
	}, &cobra.Command{
		Use:   "pull REF...",
		Short: "Pull images from their registries, showing progress (plain HTTP for loopback registries)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if r.Pull == nil {
				return missing("pull")
			}
			return r.Pull(c.Context(), o, args, c.OutOrStdout())
		},
	}, &cobra.Command{
		Use:     "rm REF...",
		Aliases: []string{"remove"},
		Short:   "Remove images",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if r.Remove == nil {
				return missing("rm")
			}
			return r.Remove(c.Context(), o, args, c.OutOrStdout())
		},
	}, newImageBuildCommand(&o, r.Build))
	return cmd
}

func newImageBuildCommand(o *ImageOptions, run func(context.Context, ImageOptions, ImageBuildOptions, io.Writer) error) *cobra.Command {
	b := ImageBuildOptions{Format: "oci"}
	cmd := &cobra.Command{
		Use:   "build --name REF (--self | --file HOST[:PATH]...) [-o FILE] [--import]",
		Short: "Write a single-layer image of local files (e.g. a static binary) as an archive, or import it",
		Long: `build packs local files into a one-layer image, without a registry or a build
tool, and writes it as an OCI image layout (or docker-save) tar with -o, or
loads it into containerd with --import. --self packs this skiff binary (which
must be static, as 'make build' makes it) at /skiff with ENTRYPOINT [/skiff],
CMD [netexec] and a PATH ending in / (so a pod command "skiff netexec ..."
finds /skiff): the test workload the examples run, as

  skiff image build --self --name skiff.local/netexec:dev --import`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if b.Name == "" {
				return fmt.Errorf("--name is required")
			}
			if !b.Self && len(b.Files) == 0 {
				return fmt.Errorf("--self or at least one --file is required")
			}
			if b.Output == "" && !b.Import {
				return fmt.Errorf("-o FILE or --import is required")
			}
			if b.Format != "oci" && b.Format != "docker" {
				return fmt.Errorf("--format %q: want oci or docker", b.Format)
			}
			for _, f := range b.Files {
				if host, _, _ := strings.Cut(f, ":"); host == "" {
					return fmt.Errorf("--file %q: want HOST_PATH[:IMAGE_PATH]", f)
				}
			}
			if run == nil {
				return fmt.Errorf("image build is not available in this build")
			}
			return run(c.Context(), *o, b, c.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&b.Name, "name", b.Name, "image reference, e.g. skiff.local/netexec:dev")
	f.StringArrayVar(&b.Files, "file", nil, "HOST_PATH[:IMAGE_PATH] to put into the image (default IMAGE_PATH: /<base name>); repeatable")
	f.BoolVar(&b.Self, "self", false, "pack this skiff binary at /skiff, ENTRYPOINT [/skiff] CMD [netexec]")
	f.StringSliceVar(&b.Entrypoint, "entrypoint", nil, "ENTRYPOINT words")
	f.StringSliceVar(&b.Cmd, "cmd", nil, "CMD words")
	f.StringArrayVar(&b.Env, "env", nil, "K=V for the image's environment; repeatable")
	f.StringVar(&b.WorkingDir, "workdir", "", "the image's working dir")
	f.StringVar(&b.Format, "format", b.Format, "archive format: oci or docker")
	f.StringVarP(&b.Output, "output", "o", "", "archive file to write (- for stdout)")
	f.BoolVar(&b.Import, "import", false, "import the image into containerd")
	return cmd
}
