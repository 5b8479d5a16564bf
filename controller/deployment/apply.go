package deployment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// deleteParallelism bounds concurrent pod deletions in one sync.
const deleteParallelism = 16

// ownerRef is the controller reference a Deployment's pods carry.
func ownerRef(d *api.Deployment) api.OwnerReference {
	t := true
	return api.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID,
		Controller: &t, BlockOwnerDeletion: &t}
}

// claimPods returns the pods d controls, as Kubernetes' ControllerRef
// manager claims them: pods controlled by d that match its selector;
// orphans that match are adopted (d not being deleted, the pod not being
// deleted); pods controlled by d that no longer match are released.
// Returned pods are shared with the cache: read only.
func (c *Controller) claimPods(ctx context.Context, d *api.Deployment) ([]*api.Pod, error) {
	var out []*api.Pod
	var errs []error
	for _, obj := range c.pods.ByIndex(podIndex, "uid/"+d.UID) {
		p, ok := obj.(*api.Pod)
		if !ok || p.Namespace != d.Namespace {
			continue
		}
		if api.SelectorMatches(d.Spec.Selector, p.Labels) {
			out = append(out, p)
			continue
		}
		if p.DeletionTimestamp != nil {
			continue
		}
		if err := c.setOwners(ctx, p, slices.DeleteFunc(slices.Clone(p.OwnerReferences),
			func(r api.OwnerReference) bool { return r.UID == d.UID }), nil); err != nil && !client.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deployment: %s/%s: release pod %s: %w", d.Namespace, d.Name, p.Name, err))
		}
	}
	if d.DeletionTimestamp == nil {
		for _, obj := range c.pods.ByIndex(podIndex, "orphan/"+d.Namespace) {
			p, ok := obj.(*api.Pod)
			if !ok || p.DeletionTimestamp != nil || !api.SelectorMatches(d.Spec.Selector, p.Labels) {
				continue
			}
			adopted := &api.Pod{}
			err := c.setOwners(ctx, p, append(slices.Clone(p.OwnerReferences), ownerRef(d)), adopted)
			switch {
			case err == nil:
				out = append(out, adopted)
			case client.IsNotFound(err):
			default:
				errs = append(errs, fmt.Errorf("deployment: %s/%s: adopt pod %s: %w", d.Namespace, d.Name, p.Name, err))
			}
		}
	}
	return out, errors.Join(errs...)
}

// setOwners replaces a pod's ownerReferences with a merge patch that
// carries the pod's uid and resourceVersion as preconditions.
func (c *Controller) setOwners(ctx context.Context, p *api.Pod, refs []api.OwnerReference, into *api.Pod) error {
	var refsJSON any = refs
	if len(refs) == 0 {
		refsJSON = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": refsJSON, "uid": p.UID, "resourceVersion": p.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	var dst api.Object
	if into != nil {
		dst = into
	}
	return c.client.Patch(ctx, c.podInfo, p.Namespace, p.Name, client.MergePatchType, patch, dst)
}

// rollback consumes AnnotationRollbackTo: it installs the template of the
// asked revision (when there is one and it differs) and removes the
// annotation, in one update.
func (c *Controller) rollback(ctx context.Context, d *api.Deployment, value string, hist []Revision, hash string) error {
	dec := resolveRollback(d.Name, value, hist, hash)
	if dec.template != nil {
		d.Spec.Template = *dec.template
	}
	delete(d.Annotations, AnnotationRollbackTo)
	if err := c.client.Update(ctx, c.deployInfo, d.Namespace, d); err != nil {
		return fmt.Errorf("deployment: %s/%s: rollback: %w", d.Namespace, d.Name, err)
	}
	c.remember(keyOf(&d.ObjectMeta), d)
	eventType := api.EventTypeWarning
	if dec.reason == ReasonRollbackDone {
		eventType = api.EventTypeNormal
	}
	c.event(d, eventType, dec.reason, "%s", dec.message)
	c.log.Info("rollback", "deployment", d.Namespace+"/"+d.Name, "reason", dec.reason, "revision", dec.revision)
	return nil
}

// recordRevision makes the current template the newest revision in the
// history and the revision annotation, updating the Deployment when they
// change. It returns the Deployment as stored and the history.
func (c *Controller) recordRevision(ctx context.Context, d *api.Deployment, hist []Revision, hash string, pods []*api.Pod) (*api.Deployment, []Revision, error) {
	live := map[string]bool{}
	for _, p := range pods {
		if isActive(p) {
			live[p.Labels[LabelPodTemplateHash]] = true
		}
	}
	limit := int32(10)
	if d.Spec.RevisionHistoryLimit != nil {
		limit = *d.Spec.RevisionHistoryLimit
	}
	next, changed := recordRevision(hist, hash, d.Spec.Template, d.Annotations[AnnotationChangeCause], limit, live)
	rev := strconv.FormatInt(next[len(next)-1].Revision, 10)
	if !changed && d.Annotations[AnnotationRevision] == rev {
		return d, hist, nil
	}
	enc, err := encodeHistory(next)
	if err != nil {
		return nil, nil, err
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[AnnotationRevision] = rev
	d.Annotations[AnnotationRevisionHistory] = enc
	if err := c.client.Update(ctx, c.deployInfo, d.Namespace, d); err != nil {
		return nil, nil, fmt.Errorf("deployment: %s/%s: record revision %s: %w", d.Namespace, d.Name, rev, err)
	}
	c.remember(keyOf(&d.ObjectMeta), d)
	return d, next, nil
}

// apply carries out one plan, with expectations set before any request.
func (c *Controller) apply(ctx context.Context, key string, d *api.Deployment, hist []Revision, hash string, states []podState, p plan) error {
	if p.empty() {
		return nil
	}
	counts := map[string]int{}
	uids := map[string]string{}
	hashOf := map[string]string{}
	for i := range states {
		if !states[i].terminating {
			counts[states[i].hash]++
		}
		uids[states[i].name] = states[i].uid
		hashOf[states[i].name] = states[i].hash
	}
	var errs []error
	if cr := p.create; cr != nil && cr.count > 0 {
		tmpl, ok := templateFor(d, hist, hash, cr.hash)
		if !ok {
			return fmt.Errorf("deployment: %s: no template for pod-template-hash %s in the revision history", key, cr.hash)
		}
		c.exp.expect(key, cr.count, nil)
		created, err := c.createPods(ctx, key, d, tmpl, cr.hash, cr.count)
		if created > 0 {
			from := counts[cr.hash]
			c.event(d, api.EventTypeNormal, ReasonScalingReplicaSet, "Scaled up replica set %s from %d to %d",
				groupName(d.Name, cr.hash), from, from+created)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(p.delete) > 0 {
		c.exp.expect(key, 0, p.delete)
		deleted, err := c.deletePods(ctx, key, d, p.delete, uids)
		byHash := map[string]int{}
		for _, name := range deleted {
			byHash[hashOf[name]]++
		}
		for _, h := range slices.Sorted(maps.Keys(byHash)) {
			from := counts[h]
			c.event(d, api.EventTypeNormal, ReasonScalingReplicaSet, "Scaled down replica set %s from %d to %d",
				groupName(d.Name, h), from, from-byHash[h])
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// templateFor is the template of hash: spec.template for the current hash,
// else the history's.
func templateFor(d *api.Deployment, hist []Revision, current, hash string) (*api.PodTemplateSpec, bool) {
	if hash == current {
		return &d.Spec.Template, true
	}
	for i := range hist {
		if hist[i].Hash == hash {
			return &hist[i].Template, true
		}
	}
	return nil, false
}

// newPod builds a pod of template t (hash) for d, as Kubernetes'
// GetPodFromTemplate: labels, annotations and finalizers of the template,
// the pod-template-hash label, a generated name and d as controller.
func newPod(d *api.Deployment, t *api.PodTemplateSpec, hash string) (*api.Pod, error) {
	var spec api.PodSpec
	b, err := json.Marshal(&t.Spec)
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		return nil, fmt.Errorf("deployment: copy pod template: %w", err)
	}
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelPodTemplateHash] = hash
	return &api.Pod{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{
			GenerateName:    podNamePrefix(d.Name, hash),
			Namespace:       d.Namespace,
			Labels:          labels,
			Annotations:     maps.Clone(t.Annotations),
			Finalizers:      slices.Clone(t.Finalizers),
			OwnerReferences: []api.OwnerReference{ownerRef(d)},
		},
		Spec: spec,
	}, nil
}

// createPods creates count pods in slow-start batches (1, 2, 4, ...), as
// Kubernetes does, stopping at the first batch with a failure; every pod
// not created lowers the expectations. It returns how many were created.
func (c *Controller) createPods(ctx context.Context, key string, d *api.Deployment, t *api.PodTemplateSpec, hash string, count int) (int, error) {
	created := 0
	for batch, left := 1, count; left > 0; batch *= 2 {
		n := min(batch, left)
		left -= n
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for range n {
			wg.Go(func() {
				err := c.createPod(ctx, d, t, hash)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					c.exp.creationObserved(key)
					errs = append(errs, err)
					return
				}
				created++
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			for range left {
				c.exp.creationObserved(key)
			}
			return created, errors.Join(errs...)
		}
	}
	return created, nil
}

func (c *Controller) createPod(ctx context.Context, d *api.Deployment, t *api.PodTemplateSpec, hash string) error {
	pod, err := newPod(d, t, hash)
	if err == nil {
		err = c.client.Create(ctx, c.podInfo, d.Namespace, pod)
	}
	if err != nil {
		if ctx.Err() == nil {
			c.event(d, api.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		}
		return fmt.Errorf("deployment: %s/%s: create pod: %w", d.Namespace, d.Name, err)
	}
	c.event(d, api.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %s", pod.Name)
	return nil
}

// deletePods deletes the named pods (uid preconditions), a few at a time.
// A failed deletion lowers the expectations; a pod already gone counts as
// deleted. It returns the names deleted.
func (c *Controller) deletePods(ctx context.Context, key string, d *api.Deployment, podNames []string, uids map[string]string) ([]string, error) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		deleted []string
		errs    []error
	)
	sem := make(chan struct{}, deleteParallelism)
	for _, name := range podNames {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var pre *client.Preconditions
			if uid := uids[name]; uid != "" {
				pre = &client.Preconditions{UID: uid}
			}
			err := c.client.Delete(ctx, c.podInfo, d.Namespace, name, client.DeleteOptions{Preconditions: pre})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				deleted = append(deleted, name)
				c.event(d, api.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %s", name)
			case client.IsNotFound(err):
				c.exp.deletionObserved(key, name)
			default:
				c.exp.deletionObserved(key, name)
				if ctx.Err() == nil {
					c.event(d, api.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
				}
				errs = append(errs, fmt.Errorf("deployment: %s: delete pod %s: %w", key, name, err))
			}
		})
	}
	wg.Wait()
	slices.Sort(deleted)
	return deleted, errors.Join(errs...)
}

// writeStatus writes st through the status subresource unless it equals
// the stored status.
func (c *Controller) writeStatus(ctx context.Context, d *api.Deployment, st api.DeploymentStatus) error {
	oldJSON, err1 := json.Marshal(d.Status)
	newJSON, err2 := json.Marshal(st)
	if err1 == nil && err2 == nil && bytes.Equal(oldJSON, newJSON) {
		return nil
	}
	d.Status = st
	if err := c.client.Update(ctx, c.deployInfo, d.Namespace, d, "status"); err != nil {
		return fmt.Errorf("deployment: %s/%s: update status: %w", d.Namespace, d.Name, err)
	}
	c.remember(keyOf(&d.ObjectMeta), d)
	return nil
}
