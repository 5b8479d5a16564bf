package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// ForwardOptions are the flags of the hidden `skiff netns-forward`.
type ForwardOptions struct {
	NetNS  string // --netns: path of the target namespace (/run/netns/NAME)
	Listen string // --listen: loopback host:port in our namespace
	Target string // --target: loopback host:port inside --netns
}

func newForwardCommand(run func(context.Context, ForwardOptions) error) *cobra.Command {
	opts := ForwardOptions{Listen: "127.0.0.1:6443", Target: "127.0.0.1:6443"}
	cmd := &cobra.Command{
		Use:    "netns-forward",
		Short:  "Internal: forward a loopback port of this namespace to a loopback port inside another network namespace (the demo's dashboard)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.NetNS == "" {
				return fmt.Errorf("--netns is required")
			}
			if run == nil {
				return fmt.Errorf("netns-forward is not available in this build")
			}
			return run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.NetNS, "netns", "", "path of the network namespace to forward into (/run/netns/NAME)")
	f.StringVar(&opts.Listen, "listen", opts.Listen, "loopback IP:port to listen on here")
	f.StringVar(&opts.Target, "target", opts.Target, "loopback IP:port to dial inside --netns")
	return cmd
}
