package kubectl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
)

func newAPIResourcesCommand(g *globals) *cobra.Command {
	var output string
	var namespaced bool
	cmd := &cobra.Command{
		Use:   "api-resources",
		Short: "Print the resource types the server serves",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env := g.env
			rs := api.Resources()
			slices.SortStableFunc(rs, func(a, b *api.ResourceInfo) int {
				if c := strings.Compare(a.Group, b.Group); c != 0 {
					return c
				}
				return strings.Compare(a.Resource, b.Resource)
			})
			if cmd.Flags().Changed("namespaced") {
				rs = slices.DeleteFunc(rs, func(r *api.ResourceInfo) bool { return r.Namespaced != namespaced })
			}
			switch output {
			case "name":
				for _, r := range rs {
					fmt.Fprintln(env.Out, qualifiedResource(r))
				}
				return nil
			case "", "wide":
			default:
				return usageError("--output %v is not available", output)
			}
			rows := [][]string{{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}}
			for _, r := range rs {
				rows = append(rows, []string{r.Resource, strings.Join(r.ShortNames, ","), r.GroupVersion(),
					strconv.FormatBool(r.Namespaced), r.Kind})
			}
			w := &columnWriter{out: env.Out}
			return w.write(rows)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "name: print only the resource names")
	cmd.Flags().BoolVar(&namespaced, "namespaced", true, "only namespaced (true) or cluster-scoped (false) resources")
	return cmd
}
