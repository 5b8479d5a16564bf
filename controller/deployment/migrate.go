package deployment

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Annotations of earlier Skiff versions, whose Deployments owned their
// pods directly; Migrate reads and removes them.
const (
	legacyAnnotationHistory    = "skiff.dev/revision-history"
	legacyAnnotationRollbackTo = "skiff.dev/rollback-to-revision"
)

// migratePageSize is how many pods Migrate reads per list request.
const migratePageSize = 500

// legacyRevision is one entry of legacyAnnotationHistory.
type legacyRevision struct {
	Revision    int64               `json:"revision"`
	Hash        string              `json:"hash"`
	ChangeCause string              `json:"changeCause,omitempty"`
	Template    api.PodTemplateSpec `json:"template"`
}

// MigrationClient is what Migrate needs of the API; *client.Client
// satisfies it.
type MigrationClient interface {
	List(ctx context.Context, info *api.ResourceInfo, ns string, opts client.ListOptions, into any) error
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Patch(ctx context.Context, info *api.ResourceInfo, ns, name, patchType string, data []byte, into api.Object, subresource ...string) error
}

var _ MigrationClient = (*client.Client)(nil)

// Migrate moves Deployments written by earlier Skiff versions (pods
// controlled by the Deployment itself, revisions in the
// skiff.dev/revision-history annotation) to ReplicaSets without
// restarting a pod. It must run before the ReplicaSet and Deployment
// controllers start, so that no controller sees a half-moved Deployment.
// For each Deployment that controls pods or carries the annotation:
//
//   - its pods are grouped by pod-template-hash; a pod whose hash is
//     neither the current template's (TemplateHash, as the old
//     controller computed it) nor in the history joins the current group;
//   - each group, and each revision of the history, gets the ReplicaSet
//     <deployment>-<hash> (created unless it exists and is the
//     Deployment's) with that template, the hash label and selector, the
//     revision number and change-cause of the history, the
//     desired/max-replicas annotations, and as spec.replicas the number of
//     the group's pods that are neither terminating nor finished: the
//     ReplicaSet controller then finds exactly its replicas;
//   - each pod's controller reference is changed from the Deployment to
//     its ReplicaSet, and its pod-template-hash label set, by a merge
//     patch with the pod's uid and resourceVersion as preconditions;
//   - last, the legacy annotations are removed from the Deployment.
//
// Pods are read in pages of migratePageSize, and only those a Deployment
// controls are kept. Every step is idempotent, so an interrupted
// migration resumes on the next start.
func Migrate(ctx context.Context, c MigrationClient, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res := api.Resources()
	dInfo, rsInfo, podInfo := api.Lookup(res, "apps/v1", "deployments"), api.Lookup(res, "apps/v1", "replicasets"), api.Lookup(res, "v1", "pods")
	var deploys api.DeploymentList
	if err := c.List(ctx, dInfo, "", client.ListOptions{}, &deploys); err != nil {
		return fmt.Errorf("deployment: migrate: list deployments: %w", err)
	}
	// Pods are read in pages and only those a Deployment controls are
	// kept, so a start over a large, already moved cluster holds one page.
	owned := map[string][]*api.Pod{}
	for opts := (client.ListOptions{Limit: migratePageSize}); ; {
		var pods api.PodList
		if err := c.List(ctx, podInfo, "", opts, &pods); err != nil {
			return fmt.Errorf("deployment: migrate: list pods: %w", err)
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if ref := api.ControllerRef(&p.ObjectMeta); ref != nil && isDeploymentRef(ref) {
				owned[ref.UID] = append(owned[ref.UID], p)
			}
		}
		if pods.Continue == "" {
			break
		}
		opts.Continue = pods.Continue
	}
	var errs []error
	for i := range deploys.Items {
		d := &deploys.Items[i]
		_, hasHist := d.Annotations[legacyAnnotationHistory]
		_, hasRollback := d.Annotations[legacyAnnotationRollbackTo]
		if len(owned[d.UID]) == 0 && !hasHist && !hasRollback {
			continue
		}
		if err := migrateOne(ctx, c, dInfo, rsInfo, podInfo, d, owned[d.UID]); err != nil {
			errs = append(errs, err)
			continue
		}
		log.Info("moved deployment to replica sets", "deployment", d.Namespace+"/"+d.Name, "pods", len(owned[d.UID]))
	}
	return errors.Join(errs...)
}

func migrateOne(ctx context.Context, c MigrationClient, dInfo, rsInfo, podInfo *api.ResourceInfo, d *api.Deployment, pods []*api.Pod) error {
	name := d.Namespace + "/" + d.Name
	var hist []legacyRevision
	if raw := d.Annotations[legacyAnnotationHistory]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &hist); err != nil {
			hist = nil // unreadable: the current template alone
		}
	}
	curHash := TemplateHash(&d.Spec.Template)
	type group struct {
		hash     string
		tmpl     api.PodTemplateSpec
		revision int64
		cause    string
		pods     []*api.Pod
	}
	groups := map[string]*group{}
	for _, h := range hist {
		if h.Hash != "" && h.Hash != curHash {
			groups[h.Hash] = &group{hash: h.Hash, tmpl: h.Template, revision: h.Revision, cause: h.ChangeCause}
		}
	}
	curRev, _ := strconv.ParseInt(d.Annotations[AnnotationRevision], 10, 64)
	if curRev == 0 {
		curRev = 1
		for _, g := range groups {
			curRev = max(curRev, g.revision+1)
		}
	}
	groups[curHash] = &group{hash: curHash, tmpl: d.Spec.Template, revision: curRev, cause: d.Annotations[AnnotationChangeCause]}
	for _, p := range pods {
		g, ok := groups[p.Labels[LabelPodTemplateHash]]
		if !ok {
			g = groups[curHash]
		}
		g.pods = append(g.pods, p)
	}
	b, err := resolveBounds(d)
	if err != nil {
		b = bounds{}
	}
	order := slices.SortedFunc(maps.Values(groups), func(a, b *group) int { return cmp.Compare(a.revision, b.revision) })
	for _, g := range order {
		var replicas int32
		for _, p := range g.pods {
			if p.DeletionTimestamp == nil && p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed {
				replicas++
			}
		}
		rs := newReplicaSet(&api.Deployment{ObjectMeta: d.ObjectMeta, Spec: api.DeploymentSpec{
			Selector: d.Spec.Selector, Template: g.tmpl, MinReadySeconds: d.Spec.MinReadySeconds}})
		// The hash is the group's (the one its pods carry), not one
		// recomputed from a template the API may have re-encoded.
		rs.Name = replicaSetName(d.Name, g.hash)
		rs.Labels[LabelPodTemplateHash] = g.hash
		rs.Spec.Selector.MatchLabels[LabelPodTemplateHash] = g.hash
		rs.Spec.Template.Labels[LabelPodTemplateHash] = g.hash
		rs.Spec.Replicas = &replicas
		rs.Annotations = map[string]string{AnnotationRevision: strconv.FormatInt(g.revision, 10)}
		if g.cause != "" {
			rs.Annotations[AnnotationChangeCause] = g.cause
		}
		setReplicasAnnotations(rs, replicasOf(d), replicasOf(d)+b.surge)
		err := c.Create(ctx, rsInfo, d.Namespace, rs)
		if client.IsAlreadyExists(err) {
			err = c.Get(ctx, rsInfo, d.Namespace, rs.Name, rs)
			if ref := api.ControllerRef(&rs.ObjectMeta); err == nil && (ref == nil || ref.UID != d.UID) {
				err = fmt.Errorf("replica set %s exists and is not controlled by the deployment", rs.Name)
			}
		}
		if err != nil {
			return fmt.Errorf("deployment: migrate %s: replica set %s: %w", name, rs.Name, err)
		}
		for _, p := range g.pods {
			refs := make([]api.OwnerReference, 0, len(p.OwnerReferences))
			for _, r := range p.OwnerReferences {
				if r.UID == d.UID {
					t := true
					r = api.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
						Controller: &t, BlockOwnerDeletion: &t}
				}
				refs = append(refs, r)
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
				"ownerReferences": refs, "labels": map[string]string{LabelPodTemplateHash: g.hash},
				"uid": p.UID, "resourceVersion": p.ResourceVersion,
			}})
			if err == nil {
				err = c.Patch(ctx, podInfo, p.Namespace, p.Name, client.MergePatchType, patch, nil)
			}
			if err != nil && !client.IsNotFound(err) {
				return fmt.Errorf("deployment: migrate %s: re-own pod %s: %w", name, p.Name, err)
			}
		}
	}
	patch := []byte(`{"metadata":{"annotations":{"` + legacyAnnotationHistory + `":null,"` + legacyAnnotationRollbackTo + `":null}}}`)
	if err := c.Patch(ctx, dInfo, d.Namespace, d.Name, client.MergePatchType, patch, nil); err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("deployment: migrate %s: remove legacy annotations: %w", name, err)
	}
	return nil
}
