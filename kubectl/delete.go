package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

type deleteOptions struct {
	files          fileOptions
	selector       string
	all            bool
	allNamespaces  bool
	gracePeriod    int
	now            bool
	force          bool
	wait           bool
	timeout        time.Duration
	ignoreNotFound bool
	cascade        string
	pollInterval   time.Duration
}

func newDeleteCommand(g *globals) *cobra.Command {
	o := &deleteOptions{pollInterval: 200 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "delete TYPE NAME... | TYPE/NAME... | -f FILENAME | TYPE -l SELECTOR | TYPE --all",
		Short: "Delete resources by file names, stdin, resources and names, or by resources and label selector",
		Long: `Delete objects and, unless --wait=false, wait until they are gone
(finalizers run, pods end their grace period).`,
		Example: `  skiff delete service data-channel
  skiff delete -f worker-deployment.yaml
  skiff delete pods -l app=web --grace-period=0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd, s, args)
		},
	}
	f := cmd.Flags()
	o.files.addFlags(cmd, "naming the objects to delete")
	f.StringVarP(&o.selector, "selector", "l", "", "delete the objects the label selector picks")
	f.BoolVar(&o.all, "all", false, "delete every object of the types in the namespace")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "with -l or --all: across all namespaces")
	f.IntVar(&o.gracePeriod, "grace-period", -1, "seconds a pod gets to terminate; -1 keeps the pod's own, 0 deletes at once (with --force)")
	f.BoolVar(&o.now, "now", false, "grace period of 1 second")
	f.BoolVar(&o.force, "force", false, "delete at once, without waiting for the pod to stop (grace period 0)")
	f.BoolVar(&o.wait, "wait", true, "wait until the objects are gone")
	f.DurationVar(&o.timeout, "timeout", 0, "how long to wait (0: a week)")
	f.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "treat a missing object as deleted")
	f.StringVar(&o.cascade, "cascade", "background", "dependents: background, foreground or orphan")
	return cmd
}

// victim is one object to delete.
type victim struct {
	info *api.ResourceInfo
	ns   string
	name string
}

func (o *deleteOptions) run(ctx context.Context, cmd *cobra.Command, s *session, args []string) error {
	opts := client.DeleteOptions{}
	switch o.cascade {
	case "background", "true":
		opts.PropagationPolicy = client.DeletePropagationBackground
	case "foreground":
		opts.PropagationPolicy = client.DeletePropagationForeground
	case "orphan", "false":
		opts.PropagationPolicy = client.DeletePropagationOrphan
	default:
		return usageError("invalid cascade value (%s). Must be \"background\", \"foreground\", or \"orphan\"", o.cascade)
	}
	grace := o.gracePeriod
	switch {
	case o.force && !cmd.Flags().Changed("grace-period"):
		grace = 0
	case o.now:
		grace = 1
	case grace == 0 && !o.force:
		// kubectl: --grace-period=0 without --force means 1 second
		grace = 1
	}
	if grace >= 0 {
		g := int64(grace)
		opts.GracePeriodSeconds = &g
	}
	if o.force {
		fmt.Fprintln(s.env.ErrOut, "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.")
	}

	var victims []victim
	var errs []error
	switch {
	case len(o.files.filenames) > 0:
		if len(args) > 0 {
			return usageError("cannot specify both a resource and -f")
		}
		ms, err := o.files.read(s.env.In)
		if err != nil {
			return err
		}
		for _, m := range ms {
			p, err := s.place(m)
			if err != nil {
				return err
			}
			victims = append(victims, victim{info: p.info, ns: p.ns, name: p.name})
		}
	case len(args) == 0:
		return usageError("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
	default:
		targets, err := s.parseTargets(args)
		if err != nil {
			return err
		}
		for _, t := range targets {
			if len(t.names) > 0 {
				if o.selector != "" || o.all {
					return usageError("name cannot be provided when a selector is specified")
				}
				for _, n := range t.names {
					victims = append(victims, victim{info: t.info, ns: s.namespaceFor(t.info, false), name: n})
				}
				continue
			}
			if o.selector == "" && !o.all {
				return usageError("resource(s) were provided, but no name was specified")
			}
			ns := s.namespaceFor(t.info, o.allNamespaces)
			var list client.RawList
			if err := s.c.List(ctx, t.info, ns, client.ListOptions{LabelSelector: o.selector}, &list); err != nil {
				errs = append(errs, err)
				continue
			}
			for _, raw := range list.Items {
				var m struct {
					Metadata api.ObjectMeta `json:"metadata"`
				}
				if err := json.Unmarshal(raw, &m); err != nil {
					return err
				}
				victims = append(victims, victim{info: t.info, ns: m.Metadata.Namespace, name: m.Metadata.Name})
			}
		}
		if len(victims) == 0 && len(errs) == 0 {
			fmt.Fprintln(s.env.ErrOut, "No resources found")
			return nil
		}
	}

	type pending struct {
		victim
		uid string
	}
	var deleted []pending
	for _, v := range victims {
		var before struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		p, err := client.ResourcePath(v.info, v.ns, v.name)
		if err == nil {
			var data []byte
			data, err = s.raw.getJSON(ctx, p, nil, acceptJSON)
			if err == nil {
				_ = json.Unmarshal(data, &before)
				err = s.c.Delete(ctx, v.info, v.ns, v.name, opts)
			}
		}
		if err != nil {
			if o.ignoreNotFound && client.IsNotFound(err) {
				continue
			}
			errs = append(errs, err)
			fmt.Fprintln(s.env.ErrOut, errorText(err))
			continue
		}
		fmt.Fprintf(s.env.Out, "%s %q %s\n", kindGroup(v.info), v.name, deletedText(grace == 0, v.ns))
		deleted = append(deleted, pending{victim: v, uid: before.Metadata.UID})
	}
	if o.wait {
		timeout := o.timeout
		if timeout <= 0 {
			timeout = 7 * 24 * time.Hour
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		for _, d := range deleted {
			if err := o.waitGone(wctx, s, d.victim, d.uid); err != nil {
				if wctx.Err() != nil && ctx.Err() == nil {
					err = fmt.Errorf("timed out waiting for the condition on %s/%s", qualifiedResource(d.info), d.name)
				}
				fmt.Fprintln(s.env.ErrOut, errorText(err))
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return errPrinted
	}
	return nil
}

// waitGone polls until the object is gone or replaced (another uid).
func (o *deleteOptions) waitGone(ctx context.Context, s *session, v victim, uid string) error {
	p, err := client.ResourcePath(v.info, v.ns, v.name)
	if err != nil {
		return err
	}
	t := time.NewTicker(o.pollInterval)
	defer t.Stop()
	for {
		data, err := s.raw.getJSON(ctx, p, nil, acceptJSON)
		if client.IsNotFound(err) {
			return nil
		}
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil && uid != "" {
			var m struct {
				Metadata api.ObjectMeta `json:"metadata"`
			}
			if json.Unmarshal(data, &m) == nil && m.Metadata.UID != uid {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// deletedText is what kubectl (1.33 and later) prints after a deleted
// object's name: "deleted", "force deleted" for a zero grace period, and
// " from NS namespace" for a namespaced object.
func deletedText(force bool, ns string) string {
	t := "deleted"
	if force {
		t = "force deleted"
	}
	if ns != "" {
		t += " from " + ns + " namespace"
	}
	return t
}
