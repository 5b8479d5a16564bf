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

// Annotations and labels of the deployment controller
// (controller/deployment), as upstream's.
const (
	annotationRevision    = "deployment.kubernetes.io/revision"
	annotationChangeCause = "kubernetes.io/change-cause"
	labelPodTemplateHash  = "pod-template-hash"
	annotationRestartedAt = "kubectl.kubernetes.io/restartedAt"
	// reasonProgressDeadline is the Progressing reason of a stuck rollout.
	reasonProgressDeadline = "ProgressDeadlineExceeded"
)

// rollbackSkippedAnnotations are not copied from a ReplicaSet to its
// Deployment on rollback (kubectl's annotationsToSkip).
var rollbackSkippedAnnotations = map[string]bool{
	"kubectl.kubernetes.io/last-applied-configuration": true,
	annotationRevision:                          true,
	"deployment.kubernetes.io/revision-history": true,
	"deployment.kubernetes.io/desired-replicas": true,
	"deployment.kubernetes.io/max-replicas":     true,
	"deprecated.deployment.rollback.to":         true,
}

// revision is one ReplicaSet of a Deployment, or one ControllerRevision
// of a DaemonSet or StatefulSet, as rollout history lists it.
type revision struct {
	Revision    int64
	ChangeCause string
	RS          *api.ReplicaSet
	CR          *api.ControllerRevision
}

// template is the pod template the revision holds.
func (r *revision) template() (*api.PodTemplateSpec, error) {
	if r.RS != nil {
		t := templateWithoutHash(r.RS.Spec.Template)
		return &t, nil
	}
	return r.CR.Template()
}

// controllerRevisions is the history of a DaemonSet or StatefulSet: the
// ControllerRevisions it controls (owner uid and selector, as kubectl's
// controlledHistories), by revision, oldest first, and its template.
func controllerRevisions(ctx context.Context, s *session, info *api.ResourceInfo, name string) ([]revision, *api.PodTemplateSpec, error) {
	var uid string
	var sel *api.LabelSelector
	var tmpl api.PodTemplateSpec
	switch info.Resource {
	case "daemonsets":
		var ds api.DaemonSet
		if err := s.c.Get(ctx, info, s.namespaceFor(info, false), name, &ds); err != nil {
			return nil, nil, err
		}
		uid, sel, tmpl = string(ds.UID), ds.Spec.Selector, ds.Spec.Template
	case "statefulsets":
		var st api.StatefulSet
		if err := s.c.Get(ctx, info, s.namespaceFor(info, false), name, &st); err != nil {
			return nil, nil, err
		}
		uid, sel, tmpl = string(st.UID), st.Spec.Selector, st.Spec.Template
	default:
		return nil, nil, fmt.Errorf("no controller revisions for %s", info.Resource)
	}
	crInfo := api.Lookup(s.resources, "apps/v1", "controllerrevisions")
	if crInfo == nil {
		return nil, nil, errors.New("the server has no controllerrevisions.apps")
	}
	var l api.ControllerRevisionList
	if err := s.c.List(ctx, crInfo, s.namespaceFor(info, false), client.ListOptions{LabelSelector: api.SelectorString(sel)}, &l); err != nil {
		return nil, nil, err
	}
	var h []revision
	for i := range l.Items {
		cr := &l.Items[i]
		if ref := api.ControllerRef(&cr.ObjectMeta); ref != nil && string(ref.UID) == uid {
			h = append(h, revision{Revision: cr.Revision, ChangeCause: cr.Annotations[annotationChangeCause], CR: cr})
		}
	}
	slices.SortStableFunc(h, func(a, b revision) int { return cmpInt64(a.Revision, b.Revision) })
	return h, &tmpl, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// deploymentReplicaSets lists the ReplicaSets a Deployment controls (its
// controller reference and selector, as kubectl's GetAllReplicaSets),
// oldest creation first.
func deploymentReplicaSets(ctx context.Context, s *session, d *api.Deployment) ([]*api.ReplicaSet, error) {
	info := api.Lookup(s.resources, "apps/v1", "replicasets")
	if info == nil {
		return nil, errors.New("the server has no replicasets.apps")
	}
	var l api.ReplicaSetList
	if err := s.c.List(ctx, info, d.Namespace, client.ListOptions{LabelSelector: api.SelectorString(d.Spec.Selector)}, &l); err != nil {
		return nil, err
	}
	var out []*api.ReplicaSet
	for i := range l.Items {
		rs := &l.Items[i]
		if ref := api.ControllerRef(&rs.ObjectMeta); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	slices.SortStableFunc(out, func(a, b *api.ReplicaSet) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return out, nil
}

// revisionHistory is a Deployment's ReplicaSets by revision, oldest first
// (kubectl's DeploymentHistoryViewer): the revision annotation, the
// change-cause annotation.
func revisionHistory(ctx context.Context, s *session, d *api.Deployment) ([]revision, error) {
	rss, err := deploymentReplicaSets(ctx, s, d)
	if err != nil {
		return nil, err
	}
	var h []revision
	for _, rs := range rss {
		v, err := strconv.ParseInt(rs.Annotations[annotationRevision], 10, 64)
		if err != nil {
			continue
		}
		h = append(h, revision{Revision: v, ChangeCause: rs.Annotations[annotationChangeCause], RS: rs})
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

// templateWithoutHash is a ReplicaSet's template without the
// pod-template-hash label: the Deployment's template of that revision.
func templateWithoutHash(t api.PodTemplateSpec) api.PodTemplateSpec {
	if _, ok := t.Labels[labelPodTemplateHash]; ok {
		l := make(map[string]string, len(t.Labels))
		for k, v := range t.Labels {
			if k != labelPodTemplateHash {
				l[k] = v
			}
		}
		t.Labels = l
	}
	return t
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
		Use:   "status deployment|statefulset|daemonset NAME",
		Short: "Watch the rollout until it completes",
		Long: `Print the rollout's progress as kubectl does ("Waiting for deployment
"web" rollout to finish: 1 of 3 updated replicas are available...") until
every replica is updated and available, or --timeout passes.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, "status", "deployments", "statefulsets", "daemonsets")
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
		switch info.Resource {
		case "deployments":
			var d api.Deployment
			if err := json.Unmarshal(raw, &d); err != nil {
				return false, "", err
			}
			msg, done, err = deploymentStatus(&d)
		case "daemonsets":
			var d api.DaemonSet
			if err := json.Unmarshal(raw, &d); err != nil {
				return false, "", err
			}
			msg, done, err = daemonSetStatus(&d)
		default:
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

// daemonSetStatus is kubectl's DaemonSetStatusViewer.
func daemonSetStatus(d *api.DaemonSet) (string, bool, error) {
	if d.Spec.UpdateStrategy.Type != api.RollingUpdateDaemonSetStrategyType {
		return "", true, fmt.Errorf("rollout status is only available for %s strategy type", api.RollingUpdateStatefulSetStrategyType)
	}
	st := d.Status
	if d.Generation > st.ObservedGeneration {
		return "Waiting for daemon set spec update to be observed...\n", false, nil
	}
	if st.UpdatedNumberScheduled < st.DesiredNumberScheduled {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...\n", d.Name, st.UpdatedNumberScheduled, st.DesiredNumberScheduled), false, nil
	}
	if st.NumberAvailable < st.DesiredNumberScheduled {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...\n", d.Name, st.NumberAvailable, st.DesiredNumberScheduled), false, nil
	}
	return fmt.Sprintf("daemon set %q successfully rolled out\n", d.Name), true, nil
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
		Use:   "undo deployment|daemonset|statefulset NAME [--to-revision=N]",
		Short: "Roll back to a previous revision",
		Long: `Roll back as kubectl does, client-side: the pod template of the
ReplicaSet of revision N (0, the default, is the revision before the
newest) replaces the Deployment's template (without its pod-template-hash
label), and that ReplicaSet's annotations (change-cause among them) are
copied onto the Deployment, in one JSON patch. The deployment controller
then rolls out that template again under a new revision. For a DaemonSet
or StatefulSet the ControllerRevision of revision N holds the patch that
restores its template, applied as a strategic merge patch.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, "rollbacker", "deployments", "daemonsets", "statefulsets")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if info.Resource != "deployments" {
				return undoControllerRevision(ctx, s, info, name, toRevision)
			}
			d, err := getDeployment(ctx, s, info, name)
			if err != nil {
				return err
			}
			if d.Spec.Paused {
				return usageError("you cannot rollback a paused deployment; resume it first with 'skiff rollout resume %s' and try again", objectRef(info, name))
			}
			h, err := revisionHistory(ctx, s, d)
			if err != nil {
				return err
			}
			if len(h) == 0 {
				return usageError("no rollout history found for deployment %q", name)
			}
			var want *revision
			if toRevision == 0 {
				// The second highest revision, as kubectl's deploymentRevision.
				if len(h) < 2 {
					return usageError("no revision found for deployment %q", name)
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
			tmpl := templateWithoutHash(want.RS.Spec.Template)
			a, _ := json.Marshal(tmpl)
			b, _ := json.Marshal(d.Spec.Template)
			if string(a) == string(b) {
				fmt.Fprintf(s.env.Out, "%s skipped rollback (current template already matches revision %d)\n", objectRef(info, name), want.Revision)
				return nil
			}
			annotations := map[string]string{}
			for k, v := range d.Annotations {
				annotations[k] = v
			}
			for k, v := range want.RS.Annotations {
				if !rollbackSkippedAnnotations[k] {
					annotations[k] = v
				}
			}
			patch, err := json.Marshal([]map[string]any{
				{"op": "replace", "path": "/spec/template", "value": tmpl},
				{"op": "replace", "path": "/metadata/annotations", "value": annotations},
			})
			if err != nil {
				return err
			}
			if err := s.c.Patch(ctx, info, s.namespaceFor(info, false), name, client.JSONPatchType, patch, nil); err != nil {
				return err
			}
			fmt.Fprintf(s.env.Out, "%s rolled back\n", objectRef(info, name))
			return nil
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "the revision to roll back to (0: the previous one)")
	return cmd
}

// pickRevision is revision to of h (0: the one before the newest), as
// kubectl's rollbackers choose it.
func pickRevision(h []revision, to int64, kind, name string) (*revision, error) {
	if len(h) == 0 {
		return nil, usageError("no rollout history found for %s %q", kind, name)
	}
	if to == 0 {
		if len(h) < 2 {
			return nil, usageError("no last revision to roll back to")
		}
		return &h[len(h)-2], nil
	}
	for i := range h {
		if h[i].Revision == to {
			return &h[i], nil
		}
	}
	return nil, usageError("unable to find specified revision %d in history", to)
}

// undoControllerRevision rolls a DaemonSet or StatefulSet back as
// kubectl's DaemonSetRollbacker and StatefulSetRollbacker do: the chosen
// revision's data, a strategic merge patch that replaces the template.
func undoControllerRevision(ctx context.Context, s *session, info *api.ResourceInfo, name string, to int64) error {
	h, cur, err := controllerRevisions(ctx, s, info, name)
	if err != nil {
		return err
	}
	want, err := pickRevision(h, to, info.Singular, name)
	if err != nil {
		return err
	}
	tmpl, err := want.template()
	if err != nil {
		return err
	}
	a, _ := json.Marshal(tmpl)
	b, _ := json.Marshal(cur)
	if string(a) == string(b) {
		fmt.Fprintf(s.env.Out, "%s skipped rollback (current template already matches revision %d)\n", objectRef(info, name), want.Revision)
		return nil
	}
	if err := s.c.Patch(ctx, info, s.namespaceFor(info, false), name, client.StrategicMergePatchType, want.CR.Data, nil); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Out, "%s rolled back\n", objectRef(info, name))
	return nil
}

func newRolloutRestartCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "restart deployment|statefulset|daemonset NAME",
		Short: "Restart every pod by a rollout",
		Long: `Set the pod template annotation kubectl.kubernetes.io/restartedAt to the
current time, which changes the template (and its hash) and so replaces
every pod through a rolling update.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, "restarter", "deployments", "statefulsets", "daemonsets")
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
		Use:   "history deployment|daemonset|statefulset NAME [--revision=N]",
		Short: "Show the revisions of a deployment, daemonset or statefulset",
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := rolloutTarget(s, args, "history viewer", "deployments", "daemonsets", "statefulsets")
			if err != nil {
				return err
			}
			var h []revision
			if info.Resource == "deployments" {
				d, err := getDeployment(cmd.Context(), s, info, name)
				if err != nil {
					return err
				}
				if h, err = revisionHistory(cmd.Context(), s, d); err != nil {
					return err
				}
			} else if h, _, err = controllerRevisions(cmd.Context(), s, info, name); err != nil {
				return err
			}
			p := newPrefixWriter()
			if rev > 0 {
				for i := range h {
					if h[i].Revision == rev {
						tmpl := &api.PodTemplateSpec{}
						if h[i].RS != nil {
							tmpl = &h[i].RS.Spec.Template // with its hash label, as kubectl shows it
						} else if tmpl, err = h[i].template(); err != nil {
							return err
						}
						p.write(0, "%s with revision #%d\n", objectRef(info, name), rev)
						describeTemplate(p, tmpl)
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
