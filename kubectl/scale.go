package kubectl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

type scaleOptions struct {
	replicas        int
	currentReplicas int
	resourceVersion string
}

func newScaleCommand(g *globals) *cobra.Command {
	o := &scaleOptions{}
	cmd := &cobra.Command{
		Use:   "scale deployment|statefulset NAME... --replicas=N | TYPE/NAME --replicas=N",
		Short: "Set a new size for a deployment or statefulset",
		Long: `Set spec.replicas through the /scale subresource. With
--current-replicas or --resource-version the change is made only if the
object still has that size or revision.`,
		Example: `  skiff scale deploy/compute-node --replicas=5
  skiff scale statefulset db --replicas=3 --current-replicas=1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("replicas") {
				return usageError("required flag(s) \"replicas\" not set")
			}
			if o.replicas < 0 {
				return usageError("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s, args)
		},
	}
	cmd.Flags().IntVar(&o.replicas, "replicas", 0, "the new number of replicas")
	cmd.Flags().IntVar(&o.currentReplicas, "current-replicas", -1, "precondition: the current size must be this")
	cmd.Flags().StringVar(&o.resourceVersion, "resource-version", "", "precondition: the object's resourceVersion must be this")
	return cmd
}

func (o *scaleOptions) run(ctx context.Context, s *session, args []string) error {
	if len(args) == 0 {
		return usageError("You must provide one or more resources by argument or filename.")
	}
	targets, err := s.parseTargets(args)
	if err != nil {
		return err
	}
	failed := false
	for _, t := range targets {
		if len(t.names) == 0 {
			return usageError("resource(s) were provided, but no name was specified")
		}
		for _, name := range t.names {
			if err := o.scaleOne(ctx, s, t.info, name); err != nil {
				fmt.Fprintln(s.env.ErrOut, errorText(err))
				failed = true
				continue
			}
			fmt.Fprintf(s.env.Out, "%s scaled\n", objectRef(t.info, name))
		}
	}
	if failed {
		return errPrinted
	}
	return nil
}

func (o *scaleOptions) scaleOne(ctx context.Context, s *session, info *api.ResourceInfo, name string) error {
	hasScale := false
	for _, sub := range info.Subresources {
		hasScale = hasScale || sub == "scale"
	}
	if !hasScale {
		return fmt.Errorf("cannot scale a %s: it has no scale subresource", kindGroup(info))
	}
	ns := s.namespaceFor(info, false)
	if o.currentReplicas < 0 && o.resourceVersion == "" {
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.replicas)
		return s.c.Patch(ctx, info, ns, name, client.MergePatchType, []byte(patch), nil, "scale")
	}
	p, err := client.ResourcePath(info, ns, name, "scale")
	if err != nil {
		return err
	}
	// Read, check the precondition, write with the read resourceVersion;
	// a conflict (a controller wrote the object meanwhile) retries, as
	// kubectl's scaler does, unless the user pinned --resource-version.
	for attempt := 0; ; attempt++ {
		var sc api.Scale
		if err := s.c.Do(ctx, "GET", p, nil, &sc); err != nil {
			return err
		}
		if o.currentReplicas >= 0 && int(sc.Spec.Replicas) != o.currentReplicas {
			//lint:ignore ST1005 kubectl's exact text
			return fmt.Errorf("Expected replicas to be %d, was %d", o.currentReplicas, sc.Spec.Replicas)
		}
		if o.resourceVersion != "" {
			sc.ResourceVersion = o.resourceVersion
		}
		sc.Spec.Replicas = int32(o.replicas)
		err := s.c.Do(ctx, "PUT", p, &sc, nil)
		if err == nil || !client.IsConflict(err) || o.resourceVersion != "" || attempt >= 4 {
			return err
		}
	}
}
