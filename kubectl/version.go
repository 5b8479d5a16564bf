package kubectl

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/internal/version"
)

func newVersionCommand(g *globals) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server versions",
		Long: `Print this binary's version and, when a kubeconfig is found, the
server's (GET /version).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := version.Get()
			doc := map[string]any{"clientVersion": v}
			var server *version.Info
			var serverErr error
			if !clientOnly {
				if _, err := os.Stat(g.kubeconfigPath()); err == nil {
					server, serverErr = serverVersion(cmd.Context(), g, cmd)
					if server != nil {
						doc["serverVersion"] = server
					}
				}
			}
			switch output {
			case "json", "yaml":
				f, _ := parseOutput(output)
				data, err := toJSON(doc)
				if err != nil {
					return err
				}
				m, err := decodeMap(data)
				if err != nil {
					return err
				}
				if err := printObject(g.env.Out, f, m, ""); err != nil {
					return err
				}
			case "":
				fmt.Fprintf(g.env.Out, "Client Version: %s\n", v.GitVersion)
				if server != nil {
					fmt.Fprintf(g.env.Out, "Server Version: %s\n", server.GitVersion)
				}
			default:
				return usageError("--output must be 'yaml' or 'json'")
			}
			return serverErr
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print only the client version")
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml")
	return cmd
}

func serverVersion(ctx context.Context, g *globals, cmd *cobra.Command) (*version.Info, error) {
	s, err := g.connect(cmd)
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := s.c.Do(ctx, "GET", "/version", nil, &info); err != nil {
		return nil, err
	}
	if info.GitVersion == "" {
		return nil, errors.New("the server's /version has no gitVersion")
	}
	return &info, nil
}
