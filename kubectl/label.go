package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// metaMapOptions drive label and annotate, which edit one metadata map.
type metaMapOptions struct {
	field           string // "labels" or "annotations"
	verb            string // "label" or "annotate"
	done            string // "labeled" or "annotated"
	overwrite       bool
	selector        string
	all             bool
	allNamespaces   bool
	list            bool
	resourceVersion string
}

func newLabelCommand(g *globals) *cobra.Command {
	return newMetaMapCommand(g, &metaMapOptions{field: "labels", verb: "label", done: "labeled"},
		"Update the labels on a resource",
		`  skiff label pods web-0 tier=front
  skiff label svc/data-channel env=prod --overwrite
  skiff label deploy web tier-`)
}

func newAnnotateCommand(g *globals) *cobra.Command {
	return newMetaMapCommand(g, &metaMapOptions{field: "annotations", verb: "annotate", done: "annotated"},
		"Update the annotations on a resource",
		`  skiff annotate deploy web kubernetes.io/change-cause="image 1.2"`)
}

func newMetaMapCommand(g *globals, o *metaMapOptions, short, example string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     o.verb + " TYPE NAME | TYPE/NAME KEY=VALUE... KEY-... [--overwrite]",
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.overwrite, "overwrite", false, "allow changing existing values")
	f.StringVarP(&o.selector, "selector", "l", "", "change every object the label selector picks")
	f.BoolVar(&o.all, "all", false, "change every object of the type in the namespace")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "with -l or --all: across all namespaces")
	f.BoolVar(&o.list, "list", false, "print the current values instead of changing them")
	f.StringVar(&o.resourceVersion, "resource-version", "", "change only if the object still has this resourceVersion")
	return cmd
}

// splitChanges separates resource arguments from KEY=VALUE and KEY-.
func splitChanges(args []string) (resources []string, set map[string]string, remove []string, err error) {
	set = map[string]string{}
	i := len(args)
	for j, a := range args {
		if strings.Contains(a, "=") || (strings.HasSuffix(a, "-") && !strings.Contains(a, "/") && j > 0) {
			i = j
			break
		}
	}
	resources = args[:i]
	for _, a := range args[i:] {
		switch {
		case strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			if k == "" {
				return nil, nil, nil, fmt.Errorf("invalid argument %q: empty key", a)
			}
			set[k] = v
		case strings.HasSuffix(a, "-") && len(a) > 1:
			remove = append(remove, strings.TrimSuffix(a, "-"))
		default:
			return nil, nil, nil, fmt.Errorf("all resources must be specified before the changes: %s", a)
		}
	}
	for _, k := range remove {
		if _, ok := set[k]; ok {
			return nil, nil, nil, fmt.Errorf("can not both modify and remove the same key %q", k)
		}
	}
	return resources, set, remove, nil
}

func (o *metaMapOptions) run(ctx context.Context, s *session, args []string) error {
	resources, set, remove, err := splitChanges(args)
	if err != nil {
		return usageError("%v", err)
	}
	if len(resources) == 0 {
		return usageError("one or more resources must be specified as <resource> <name> or <resource>/<name>")
	}
	if len(set) == 0 && len(remove) == 0 && !o.list {
		return usageError("at least one %s update is required", strings.TrimSuffix(o.field, "s"))
	}
	targets, err := s.parseTargets(resources)
	if err != nil {
		return err
	}
	var victims []victim
	for _, t := range targets {
		if len(t.names) > 0 {
			for _, n := range t.names {
				victims = append(victims, victim{info: t.info, ns: s.namespaceFor(t.info, false), name: n})
			}
			continue
		}
		if o.selector == "" && !o.all {
			return usageError("resource(s) were provided, but no name was specified")
		}
		var list client.RawList
		if err := s.c.List(ctx, t.info, s.namespaceFor(t.info, o.allNamespaces), client.ListOptions{LabelSelector: o.selector}, &list); err != nil {
			return err
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
	failed := false
	for _, v := range victims {
		if err := o.change(ctx, s, v, set, remove); err != nil {
			fmt.Fprintln(s.env.ErrOut, errorText(err))
			failed = true
		}
	}
	if failed {
		return errPrinted
	}
	return nil
}

func (o *metaMapOptions) change(ctx context.Context, s *session, v victim, set map[string]string, remove []string) error {
	var obj struct {
		Metadata api.ObjectMeta `json:"metadata"`
	}
	p, err := client.ResourcePath(v.info, v.ns, v.name)
	if err != nil {
		return err
	}
	if err := s.c.Do(ctx, "GET", p, nil, &obj); err != nil {
		return err
	}
	current := obj.Metadata.Labels
	if o.field == "annotations" {
		current = obj.Metadata.Annotations
	}
	if o.list {
		for _, k := range sortedKeys(current) {
			fmt.Fprintf(s.env.Out, "%s=%s\n", k, current[k])
		}
		return nil
	}
	changes := map[string]any{}
	for _, k := range sortedKeys(set) {
		old, ok := current[k]
		if ok && old != set[k] && !o.overwrite {
			return fmt.Errorf("'%s' already has a value (%s), and --overwrite is false", k, old)
		}
		if !ok || old != set[k] {
			changes[k] = set[k]
		}
	}
	for _, k := range remove {
		if _, ok := current[k]; !ok {
			fmt.Fprintf(s.env.ErrOut, "%s %q not found.\n", strings.TrimSuffix(o.field, "s"), k)
			continue
		}
		changes[k] = nil
	}
	ref := objectRef(v.info, v.name)
	if len(changes) == 0 {
		fmt.Fprintf(s.env.Out, "%s not %s\n", ref, o.done)
		return nil
	}
	meta := map[string]any{o.field: changes}
	if o.resourceVersion != "" {
		meta["resourceVersion"] = o.resourceVersion
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	if err := s.c.Patch(ctx, v.info, v.ns, v.name, client.MergePatchType, patch, nil); err != nil {
		return err
	}
	done := o.done
	onlyRemovals := true
	for _, v := range changes {
		onlyRemovals = onlyRemovals && v == nil
	}
	if onlyRemovals && o.field == "labels" {
		done = "unlabeled"
	}
	fmt.Fprintf(s.env.Out, "%s %s\n", ref, done)
	return nil
}
