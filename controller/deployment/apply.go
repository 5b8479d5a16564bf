package deployment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// errCollision asks for a retry after a hash collision raised
// status.collisionCount.
var errCollision = errors.New("deployment: replica set name collision, collisionCount raised")

// errCacheBehind asks for a retry when the new ReplicaSet exists but the
// cache does not show it yet.
var errCacheBehind = errors.New("deployment: the replica set cache is behind")

// claimReplicaSets returns the ReplicaSets d controls, as upstream's
// ReplicaSetControllerRefManager claims them: those controlled by d whose
// labels match its selector; orphans that match are adopted (neither d
// nor the ReplicaSet being deleted, d re-read live first); those
// controlled by d that no longer match are released (unless d is being
// deleted). Returned objects are shared with the cache: read only.
func (c *Controller) claimReplicaSets(ctx context.Context, d *api.Deployment) ([]*api.ReplicaSet, error) {
	var out []*api.ReplicaSet
	var errs []error
	for _, obj := range c.replicaSets.ByIndex(rsIndex, "uid/"+d.UID) {
		rs, ok := obj.(*api.ReplicaSet)
		if !ok || rs.Namespace != d.Namespace {
			continue
		}
		if api.SelectorMatches(d.Spec.Selector, rs.Labels) {
			out = append(out, rs)
			continue
		}
		if d.DeletionTimestamp != nil {
			continue
		}
		refs := slices.DeleteFunc(slices.Clone(rs.OwnerReferences), func(r api.OwnerReference) bool { return r.UID == d.UID })
		if err := c.setOwners(ctx, c.rsInfo, &rs.ObjectMeta, refs, nil); err != nil && !client.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deployment: %s/%s: release replica set %s: %w", d.Namespace, d.Name, rs.Name, err))
		}
	}
	if d.DeletionTimestamp != nil {
		return out, errors.Join(errs...)
	}
	rechecked := false
	for _, obj := range c.replicaSets.ByIndex(rsIndex, "orphan/"+d.Namespace) {
		rs, ok := obj.(*api.ReplicaSet)
		if !ok || rs.DeletionTimestamp != nil || !api.SelectorMatches(d.Spec.Selector, rs.Labels) {
			continue
		}
		if !rechecked {
			// RecheckDeletionTimestamp: adopt only for a Deployment that
			// still exists, is this one, and is not being deleted.
			live := &api.Deployment{}
			if err := c.client.Get(ctx, c.deployInfo, d.Namespace, d.Name, live); err != nil {
				return out, errors.Join(append(errs, fmt.Errorf("deployment: %s/%s: recheck before adoption: %w", d.Namespace, d.Name, err))...)
			}
			if live.UID != d.UID || live.DeletionTimestamp != nil {
				return out, errors.Join(errs...)
			}
			rechecked = true
		}
		adopted := &api.ReplicaSet{}
		err := c.setOwners(ctx, c.rsInfo, &rs.ObjectMeta, append(slices.Clone(rs.OwnerReferences), ownerRef(d)), adopted)
		switch {
		case err == nil:
			out = append(out, adopted)
		case client.IsNotFound(err):
		default:
			errs = append(errs, fmt.Errorf("deployment: %s/%s: adopt replica set %s: %w", d.Namespace, d.Name, rs.Name, err))
		}
	}
	return out, errors.Join(errs...)
}

// setOwners replaces an object's ownerReferences with a merge patch that
// carries its uid and resourceVersion as preconditions (a merge patch
// replaces the whole list, so it is computed from the stored one).
func (c *Controller) setOwners(ctx context.Context, info *api.ResourceInfo, m *api.ObjectMeta, refs []api.OwnerReference, into api.Object) error {
	var refsJSON any = refs
	if len(refs) == 0 {
		refsJSON = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": refsJSON, "uid": m.UID, "resourceVersion": m.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	return c.client.Patch(ctx, info, m.Namespace, m.Name, client.MergePatchType, patch, into)
}

// apply carries out p in order: create the new ReplicaSet, record the
// Deployment's revision, write the scaled ReplicaSets, delete the
// cleaned-up ones. It stops at the first failure. It reports whether the
// new ReplicaSet was created; p.New is replaced by the stored object.
func (c *Controller) apply(ctx context.Context, d *api.Deployment, p *Plan) (created bool, err error) {
	key := keyOf(&d.ObjectMeta)
	if rs := p.Create; rs != nil {
		if err := c.client.Create(ctx, c.rsInfo, d.Namespace, rs); err != nil {
			if client.IsAlreadyExists(err) {
				return false, c.onNameTaken(ctx, d, rs.Name)
			}
			if ctx.Err() == nil {
				c.event(d, api.EventTypeWarning, "FailedCreate", "Failed to create new replica set %q: %v", rs.Name, err)
			}
			return false, fmt.Errorf("deployment: %s: create replica set %s: %w", key, rs.Name, err)
		}
		created = true
		p.New = rs
		if n := rsReplicas(rs); n > 0 {
			c.event(d, api.EventTypeNormal, ReasonScalingReplicaSet, "Scaled up replica set %s from 0 to %d", rs.Name, n)
		}
	}
	if p.Revision != "" {
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations[AnnotationRevision] = p.Revision
		if err := c.client.Update(ctx, c.deployInfo, d.Namespace, d); err != nil {
			return created, fmt.Errorf("deployment: %s: record revision %s: %w", key, p.Revision, err)
		}
		c.remember(key, d)
	}
	for _, u := range p.Updates {
		if err := c.client.Update(ctx, c.rsInfo, d.Namespace, u.RS); err != nil {
			return created, fmt.Errorf("deployment: %s: update replica set %s: %w", key, u.RS.Name, err)
		}
		switch to := rsReplicas(u.RS); {
		case to > u.From:
			c.event(d, api.EventTypeNormal, ReasonScalingReplicaSet, "Scaled up replica set %s from %d to %d", u.RS.Name, u.From, to)
		case to < u.From:
			c.event(d, api.EventTypeNormal, ReasonScalingReplicaSet, "Scaled down replica set %s from %d to %d", u.RS.Name, u.From, to)
		}
	}
	for _, rs := range p.Delete {
		err := c.client.Delete(ctx, c.rsInfo, d.Namespace, rs.Name, client.DeleteOptions{Preconditions: &client.Preconditions{UID: rs.UID}})
		if err != nil && !client.IsNotFound(err) {
			return created, fmt.Errorf("deployment: %s: delete old replica set %s: %w", key, rs.Name, err)
		}
	}
	return created, nil
}

// onNameTaken handles a create refused because <deployment>-<hash>
// exists: when it is d's and has d's template, the cache is only behind
// (the next sync finds it); otherwise the hash collided, and, as
// upstream, status.collisionCount goes up so the next hash differs.
func (c *Controller) onNameTaken(ctx context.Context, d *api.Deployment, name string) error {
	live := &api.ReplicaSet{}
	if err := c.client.Get(ctx, c.rsInfo, d.Namespace, name, live); err != nil {
		return fmt.Errorf("deployment: %s/%s: read existing replica set %s: %w", d.Namespace, d.Name, name, err)
	}
	if ref := api.ControllerRef(&live.ObjectMeta); ref != nil && ref.UID == d.UID && equalIgnoreHash(&live.Spec.Template, &d.Spec.Template) {
		return errCacheBehind
	}
	n := int32(1)
	if d.Status.CollisionCount != nil {
		n = *d.Status.CollisionCount + 1
	}
	d.Status.CollisionCount = &n
	if err := c.client.Update(ctx, c.deployInfo, d.Namespace, d, "status"); err != nil {
		return fmt.Errorf("deployment: %s/%s: raise collisionCount: %w", d.Namespace, d.Name, err)
	}
	c.remember(keyOf(&d.ObjectMeta), d)
	c.log.Info("replica set name collision", "deployment", d.Namespace+"/"+d.Name, "replicaset", name, "collisionCount", n)
	return errCollision
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
