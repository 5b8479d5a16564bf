package kubectl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/kubectl/threeway"
)

// LastAppliedAnnotation holds the configuration `apply` last applied, as
// kubectl writes it.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

type applyOptions struct {
	files  fileOptions
	dryRun string
}

func newApplyCommand(g *globals) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Apply a configuration to resources from files, directories or stdin",
		Long: `Create objects that do not exist and update those that do, as kubectl's
client-side apply: the configuration is recorded in the
kubectl.kubernetes.io/last-applied-configuration annotation, and an update
is a three-way strategic merge patch between that record, the new
configuration and the live object, so fields removed from the
configuration are removed from the object and fields others set are kept.`,
		Example: `  skiff apply -f worker-deployment.yaml
  skiff apply -f manifests/
  cat svc.yaml | skiff apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(o.files.filenames) == 0 {
				return usageError("must specify one of -f and -k")
			}
			if err := checkDryRun(o.dryRun); err != nil {
				return err
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s)
		},
	}
	o.files.addFlags(cmd, "to apply")
	cmd.Flags().StringVar(&o.dryRun, "dry-run", "none", `"none", or "client" to print what would be sent without sending it`)
	return cmd
}

// checkDryRun validates --dry-run.
func checkDryRun(v string) error {
	switch v {
	case "none", "client", "":
		return nil
	case "server":
		return usageError("--dry-run=server is not supported by Skiff; use --dry-run=client")
	}
	return usageError("invalid dry-run value (%s). Must be \"none\" or \"client\".", v)
}

func dryRunSuffix(v string) string {
	if v == "client" {
		return " (dry run)"
	}
	return ""
}

func (o *applyOptions) run(ctx context.Context, s *session) error {
	ms, err := o.files.read(s.env.In)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		return usageError("no objects passed to apply")
	}
	failed := false
	for _, m := range ms {
		p, err := s.place(m)
		if err == nil {
			err = o.applyOne(ctx, s, p)
		}
		if err != nil {
			fmt.Fprintln(s.env.ErrOut, errorText(err))
			failed = true
		}
	}
	if failed {
		return errPrinted
	}
	return nil
}

// applyOne creates or patches one object and prints the outcome.
func (o *applyOptions) applyOne(ctx context.Context, s *session, p placed) error {
	if p.name == "" {
		if str(p.obj, "metadata", "generateName") != "" {
			return fmt.Errorf("from %s: cannot use generate name with apply", p.source)
		}
		return fmt.Errorf("error validating %q: error validating data: metadata.name not set", p.source)
	}
	modified, _ := threeway.StripNulls(p.obj).(map[string]any)
	if p.info.Namespaced {
		setNested(modified, p.ns, "metadata", "namespace")
	}
	// The annotation records the configuration without itself.
	if ann, ok := nested(modified, "metadata", "annotations").(map[string]any); ok {
		delete(ann, LastAppliedAnnotation)
		if len(ann) == 0 {
			delete(modified["metadata"].(map[string]any), "annotations")
		}
	}
	lastApplied, err := json.Marshal(modified)
	if err != nil {
		return fmt.Errorf("encode %s: %w", p.name, err)
	}
	setNested(modified, string(lastApplied)+"\n", "metadata", "annotations", LastAppliedAnnotation)
	body, err := json.Marshal(modified)
	if err != nil {
		return fmt.Errorf("encode %s: %w", p.name, err)
	}
	ref := objectRef(p.info, p.name)

	path, err := client.ResourcePath(p.info, p.ns, p.name)
	if err != nil {
		return err
	}
	currentJSON, err := s.raw.getJSON(ctx, path, nil, acceptJSON)
	if client.IsNotFound(err) {
		if o.dryRun != "client" {
			coll, err := client.ResourcePath(p.info, p.ns, "")
			if err != nil {
				return err
			}
			if err := s.c.Do(ctx, http.MethodPost, coll, body, nil); err != nil {
				return err
			}
		}
		fmt.Fprintf(s.env.Out, "%s created%s\n", ref, dryRunSuffix(o.dryRun))
		return nil
	}
	if err != nil {
		return err
	}
	current, err := threeway.Decode(currentJSON)
	if err != nil {
		return err
	}
	var original map[string]any
	if prev := str(current, "metadata", "annotations", LastAppliedAnnotation); prev != "" {
		if original, err = threeway.Decode([]byte(prev)); err != nil {
			original = nil
		}
	} else {
		fmt.Fprintf(s.env.ErrOut, "Warning: resource %s %s is missing the %s annotation which is required by skiff apply. skiff apply should only be used on resources created declaratively by either skiff create --save-config or skiff apply. The missing annotation will be patched automatically.\n",
			qualifiedResource(p.info), p.name, LastAppliedAnnotation)
	}
	modifiedMap, err := threeway.Decode(body)
	if err != nil {
		return err
	}
	patch := threeway.ThreeWay(original, modifiedMap, current)
	if len(patch) == 0 {
		fmt.Fprintf(s.env.Out, "%s unchanged%s\n", ref, dryRunSuffix(o.dryRun))
		return nil
	}
	if o.dryRun != "client" {
		data, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		if err := s.c.Patch(ctx, p.info, p.ns, p.name, client.StrategicMergePatchType, data, nil); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.env.Out, "%s configured%s\n", ref, dryRunSuffix(o.dryRun))
	return nil
}
