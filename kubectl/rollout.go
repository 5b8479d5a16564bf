package kubectl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Annotations shared with the deployment controller (controller/deployment).
const (
	annotationRevisionHistory = "skiff.dev/revision-history"
	annotationRollbackTo      = "skiff.dev/rollback-to-revision"
	annotationRestartedAt     = "kubectl.kubernetes.io/restartedAt"
	// reasonProgressDeadline is the Progressing reason of a stuck rollout.
	reasonProgressDeadline = "ProgressDeadlineExceeded"
)

// revision is one entry of the controller's revision history.
type revision struct {
	Revision    int64               `json:"revision"`
	Hash        string              `json:"hash"`
	ChangeCause string              `json:"changeCause,omitempty"`
	Template    api.PodTemplateSpec `json:"template"`
}

// revisionHistory decodes a Deployment's history, oldest first.
func revisionHistory(d *api.Deployment) ([]revision, error) {
	raw := d.Annotations[annotationRevisionHistory]
	if raw == "" {
		return nil, nil
	}
	var h []revision
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", annotationRevisionHistory, err)
	}
	slices.SortStableFunc(h, func(a, b revision) int {
		switch {
		case a.Revision < b.Revision:
			return -1
		case a.Revision > b.Revision:
			return 1
		}
		return 0
	})
	return h, nil
}

func newRolloutCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Manage the rollout of a deployment or statefulset",
		Example: `  skiff rollout status deploy/web
  skiff rollout undo deploy/web --to-revision=2
  skiff rollout restart deploy/web
  skiff rollout history deploy/web`,
	}
	cmd.AddCommand(newRolloutStatusCommand(g), newRolloutUndoCommand(g), newRolloutRestartCommand(g),
		newRolloutHistoryCommand(g), newRolloutPauseCommand(g, true), newRolloutPauseCommand(g, false))
	return cmd
}

// rolloutTarget reads TYPE NAME / TYPE/NAME for a rollout subcommand.
func rolloutTarget(s *session, args []string, verb string, allowed ...string) (*api.ResourceInfo, string, error) {
	if len(args) == 0 {
		return nil, "", usageError("required resource not specified")
	}
	info, name, err := s.oneTarget(args, "rollout "+verb)
	if err != nil {
		return nil, "", err
	}
	if !slices.Contains(allowed, info.Resource) {
		return nil, "", usageError("no %s has been implemented for %q", verb, info.GroupVersion()+", Kind="+info.Kind)
	}
	return info, name, nil
}

func newRolloutStatusCommand(g *globals) *cobra.Command {
	var timeout time.Duration
	watch := true
	cmd := &cobra.Command{
		Use:   "status deployment|statefulset NAME",
		Short: "Watch the rollout until it completes",
		Long: `Print the rollout's progress as kubectl does ("Waiting for deployment
"web" rollout to finish: 1 of 3 updated replicas are available...") until
every replica is updated and available, or --timeout passes.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, "status", "deployments", "statefulsets")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			err = rolloutStatus(ctx, s, info, name, watch)
			if errors.Is(err, context.DeadlineExceeded) && cmd.Context().Err() == nil {
				return usageError("timed out waiting for the condition")
			}
			return err
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "how long to wait (0: forever)")
	cmd.Flags().BoolVarP(&watch, "watch", "w", true, "watch until the rollout completes")
	return cmd
}

// rolloutStatus prints status messages as they change until done.
func rolloutStatus(ctx context.Context, s *session, info *api.ResourceInfo, name string, watch bool) error {
	ns := s.namespaceFor(info, false)
	last := ""
	check := func(raw []byte) (bool, string, error) {
		var msg string
		var done bool
		var err error
		if info.Resource == "deployments" {
			var d api.Deployment
			if err := json.Unmarshal(raw, &d); err != nil {
				return false, "", err
			}
			msg, done, err = deploymentStatus(&d)
		} else {
			var st api.StatefulSet
			if err := json.Unmarshal(raw, &st); err != nil {
				return false, "", err
			}
			msg, done, err = statefulSetStatus(&st)
		}
		if err != nil {
			return false, "", err
		}
		if msg != last {
			fmt.Fprint(s.env.Out, msg)
			last = msg
		}
		var m struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &m)
		return done, m.Metadata.ResourceVersion, nil
	}
	p, err := client.ResourcePath(info, ns, name)
	if err != nil {
		return err
	}
	for {
		data, err := s.raw.getJSON(ctx, p, nil, acceptJSON)
		if err != nil {
			return err
		}
		done, rv, err := check(data)
		if err != nil || done || !watch {
			return err
		}
		w, err := s.c.Watch(ctx, info, ns, client.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: rv})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case client.EventDeleted:
				w.Stop()
				return fmt.Errorf("object has been deleted")
			case client.EventError:
				// relist below
			case client.EventAdded, client.EventModified:
				done, _, err := check(ev.Object)
				if err != nil || done {
					w.Stop()
					return err
				}
			}
			if ev.Type == client.EventError {
				break
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// deploymentStatus is kubectl's DeploymentStatusViewer.
func deploymentStatus(d *api.Deployment) (string, bool, error) {
	if d.Generation <= d.Status.ObservedGeneration {
		for _, c := range d.Status.Conditions {
			if c.Type == api.DeploymentProgressing && c.Reason == reasonProgressDeadline {
				return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
			}
		}
		if d.Spec.Replicas != nil && d.Status.UpdatedReplicas < *d.Spec.Replicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...\n", d.Name, d.Status.UpdatedReplicas, *d.Spec.Replicas), false, nil
		}
		if d.Status.Replicas > d.Status.UpdatedReplicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...\n", d.Name, d.Status.Replicas-d.Status.UpdatedReplicas), false, nil
		}
		if d.Status.AvailableReplicas < d.Status.UpdatedReplicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...\n", d.Name, d.Status.AvailableReplicas, d.Status.UpdatedReplicas), false, nil
		}
		return fmt.Sprintf("deployment %q successfully rolled out\n", d.Name), true, nil
	}
	return "Waiting for deployment spec update to be observed...\n", false, nil
}

// statefulSetStatus is kubectl's StatefulSetStatusViewer.
func statefulSetStatus(st *api.StatefulSet) (string, bool, error) {
	if st.Spec.UpdateStrategy.Type == api.OnDeleteStatefulSetStrategyType {
		return "", true, fmt.Errorf("rollout status is only available for %s strategy type", api.RollingUpdateStatefulSetStrategyType)
	}
	if st.Status.ObservedGeneration == 0 || st.Generation > st.Status.ObservedGeneration {
		return "Waiting for statefulset spec update to be observed...\n", false, nil
	}
	replicas := int32(1)
	if st.Spec.Replicas != nil {
		replicas = *st.Spec.Replicas
	}
	if st.Status.ReadyReplicas < replicas {
		return fmt.Sprintf("Waiting for %d pods to be ready...\n", replicas-st.Status.ReadyReplicas), false, nil
	}
	if ru := st.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition > 0 {
		if st.Status.UpdatedReplicas < replicas-*ru.Partition {
			return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n",
				st.Status.UpdatedReplicas, replicas-*ru.Partition), false, nil
		}
		return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...\n", st.Status.UpdatedReplicas), true, nil
	}
	if st.Status.UpdateRevision != st.Status.CurrentRevision {
		return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...\n",
			st.Status.UpdatedReplicas, st.Status.UpdateRevision), false, nil
	}
	return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...\n", st.Status.CurrentReplicas, st.Status.CurrentRevision), true, nil
}

// getDeployment reads a Deployment.
func getDeployment(ctx context.Context, s *session, info *api.ResourceInfo, name string) (*api.Deployment, error) {
	var d api.Deployment
	if err := s.c.Get(ctx, info, s.namespaceFor(info, false), name, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

func newRolloutUndoCommand(g *globals) *cobra.Command {
	var toRevision int64
	cmd := &cobra.Command{
		Use:   "undo deployment NAME [--to-revision=N]",
		Short: "Roll back to a previous revision",
		Long: `Ask the deployment controller to roll back: the annotation
skiff.dev/rollback-to-revision is set to N (0, the default, is the revision
before the current one); the controller copies that revision's template and
removes the annotation.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, "rollbacker", "deployments")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			d, err := getDeployment(ctx, s, info, name)
			if err != nil {
				return err
			}
			h, err := revisionHistory(d)
			if err != nil {
				return err
			}
			if len(h) == 0 {
				return usageError("no rollout history found for deployment %q", name)
			}
			current := h[len(h)-1]
			var want *revision
			if toRevision == 0 {
				if len(h) < 2 {
					return usageError("no rollout history found for deployment %q", name)
				}
				want = &h[len(h)-2]
			} else {
				for i := range h {
					if h[i].Revision == toRevision {
						want = &h[i]
					}
				}
				if want == nil {
					return usageError("unable to find specified revision %d in history", toRevision)
				}
			}
			if want.Hash == current.Hash {
				fmt.Fprintf(s.env.Out, "%s skipped rollback (current template already matches revision %d)\n", objectRef(info, name), want.Revision)
				return nil
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
				"annotations": map[string]any{annotationRollbackTo: strconv.FormatInt(want.Revision, 10)}}})
			if err != nil {
				return err
			}
			if err := s.c.Patch(ctx, info, s.namespaceFor(info, false), name, client.MergePatchType, patch, nil); err != nil {
				return err
			}
			fmt.Fprintf(s.env.Out, "%s rolled back\n", objectRef(info, name))
			return nil
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "the revision to roll back to (0: the previous one)")
	return cmd
}

func newRolloutRestartCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "restart deployment|statefulset NAME",
		Short: "Restart every pod by a rollout",
		Long: `Set the pod template annotation kubectl.kubernetes.io/restartedAt to the
current time, which changes the template (and its hash) and so replaces
every pod through a rolling update.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, "restarter", "deployments", "statefulsets")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			ns := s.namespaceFor(info, false)
			if info.Resource == "deployments" {
				d, err := getDeployment(ctx, s, info, name)
				if err != nil {
					return err
				}
				if d.Spec.Paused {
					return usageError("%s %q can't restart paused deployment (run rollout resume first)", qualifiedResource(info), name)
				}
			}
			patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
				"annotations": map[string]any{annotationRestartedAt: s.env.Now().Format(time.RFC3339Nano)}}}}})
			if err != nil {
				return err
			}
			if err := s.c.Patch(ctx, info, ns, name, client.StrategicMergePatchType, patch, nil); err != nil {
				return err
			}
			fmt.Fprintf(s.env.Out, "%s restarted\n", objectRef(info, name))
			return nil
		},
	}
}

func newRolloutHistoryCommand(g *globals) *cobra.Command {
	var rev int64
	cmd := &cobra.Command{
		Use:   "history deployment NAME [--revision=N]",
		Short: "Show the revisions of a deployment",
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, "history viewer", "deployments")
			if err != nil {
				return err
			}
			d, err := getDeployment(cmd.Context(), s, info, name)
			if err != nil {
				return err
			}
			h, err := revisionHistory(d)
			if err != nil {
				return err
			}
			p := newPrefixWriter()
			if rev > 0 {
				for i := range h {
					if h[i].Revision == rev {
						p.write(0, "%s with revision #%d\n", objectRef(info, name), rev)
						describeTemplate(p, &h[i].Template)
						fmt.Fprint(s.env.Out, p.String())
						return nil
					}
				}
				return usageError("unable to find the specified revision")
			}
			if len(h) == 0 {
				fmt.Fprintf(s.env.Out, "No rollout history found.\n")
				return nil
			}
			p.write(0, "%s \n", objectRef(info, name))
			p.write(0, "REVISION\tCHANGE-CAUSE\n")
			for _, r := range h {
				p.write(0, "%d\t%s\n", r.Revision, orNone(r.ChangeCause))
			}
			fmt.Fprintln(s.env.Out, p.String())
			return nil
		},
	}
	cmd.Flags().Int64Var(&rev, "revision", 0, "show the pod template of this revision")
	return cmd
}

func newRolloutPauseCommand(g *globals, pause bool) *cobra.Command {
	verb, done := "resume", "resumed"
	if pause {
		verb, done = "pause", "paused"
	}
	return &cobra.Command{
		Use:   verb + " deployment NAME",
		Short: map[bool]string{true: "Pause a deployment's rollouts", false: "Resume a paused deployment"}[pause],
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, verb+"r", "deployments")
			if err != nil {
				return err
			}
			d, err := getDeployment(cmd.Context(), s, info, name)
			if err != nil {
				return err
			}
			if d.Spec.Paused == pause {
				return usageError("%s %q is not %s", qualifiedResource(info), name, map[bool]string{true: "resumed", false: "paused"}[pause])
			}
			patch := fmt.Sprintf(`{"spec":{"paused":%t}}`, pause)
			if err := s.c.Patch(cmd.Context(), info, s.namespaceFor(info, false), name, client.MergePatchType, []byte(patch), nil); err != nil {
				return err
			}
			fmt.Fprintf(s.env.Out, "%s %s\n", objectRef(info, name), done)
			return nil
		},
	}
}
