package replicaset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// deleteParallelism bounds concurrent pod deletions in one sync.
const deleteParallelism = 16

// maxGeneratedNameLength is how much of a generateName the API server
// keeps before its 5 random characters (63 - 5), as upstream's name
// generator truncates.
const maxGeneratedNameLength = 58

// claim carries out plan's adoptions and releases, as upstream's
// PodControllerRefManager: before the first adoption the set is read live
// (not from the cache) and nothing is adopted when it is gone, has another
// uid or is being deleted; every patch carries the pod's uid and
// resourceVersion as preconditions. A pod gone meanwhile (404) is skipped.
// It returns the set's owned pods: plan.Owned less the adoptions that did
// not happen. Any other failure is returned, and the round stops there.
func (c *Controller) claim(ctx context.Context, obj api.Object, s *Set, plan *Plan) ([]*api.Pod, error) {
	owned := plan.Owned
	var errs []error
	if len(plan.Adopt) > 0 {
		if err := c.canAdopt(ctx, s); err != nil {
			return nil, err
		}
		failed := map[string]bool{}
		ref := c.kind.controllerRef(s)
		for _, p := range plan.Adopt {
			err := c.setOwners(ctx, p, append(slices.Clone(p.OwnerReferences), ref))
			switch {
			case err == nil:
			case client.IsNotFound(err):
				failed[p.UID] = true
			default:
				failed[p.UID] = true
				errs = append(errs, fmt.Errorf("%s: %s/%s: adopt pod %s: %w", c.kind.ControllerName, s.Namespace, s.Name, p.Name, err))
			}
		}
		if len(failed) > 0 {
			owned = slices.DeleteFunc(slices.Clone(owned), func(p *api.Pod) bool { return failed[p.UID] })
		}
	}
	for _, p := range plan.Release {
		refs := slices.DeleteFunc(slices.Clone(p.OwnerReferences), func(r api.OwnerReference) bool { return r.UID == s.UID })
		if err := c.setOwners(ctx, p, refs); err != nil && !client.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%s: %s/%s: release pod %s: %w", c.kind.ControllerName, s.Namespace, s.Name, p.Name, err))
		}
	}
	return owned, errors.Join(errs...)
}

// canAdopt is upstream's RecheckDeletionTimestamp: a live read of the set.
func (c *Controller) canAdopt(ctx context.Context, s *Set) error {
	fresh := c.setInfo.New()
	if err := c.client.Get(ctx, c.setInfo, s.Namespace, s.Name, fresh); err != nil {
		return fmt.Errorf("%s: %s/%s: can't recheck DeletionTimestamp: %w", c.kind.ControllerName, s.Namespace, s.Name, err)
	}
	m := fresh.GetObjectMeta()
	if m.UID != s.UID {
		return fmt.Errorf("%s: original %s %s/%s is gone: got uid %s, wanted %s", c.kind.ControllerName, c.kind.Name, s.Namespace, s.Name, m.UID, s.UID)
	}
	if m.DeletionTimestamp != nil {
		return fmt.Errorf("%s: %s/%s has just been deleted at %s", c.kind.ControllerName, s.Namespace, s.Name, m.DeletionTimestamp.Time)
	}
	return nil
}

// setOwners replaces a pod's ownerReferences with a merge patch that
// carries the pod's uid and resourceVersion as preconditions (a merge
// patch replaces the whole list, so the list it is computed from must be
// the stored one).
func (c *Controller) setOwners(ctx context.Context, p *api.Pod, refs []api.OwnerReference) error {
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
	return c.client.Patch(ctx, c.podInfo, p.Namespace, p.Name, client.MergePatchType, patch, nil)
}

// manage carries out plan's creations or deletions, with expectations set
// before any request.
func (c *Controller) manage(ctx context.Context, key string, obj api.Object, s *Set, plan *Plan) error {
	switch {
	case plan.Create > 0:
		c.exp.Forget(key) // a plan replaces what is left (only expired expectations)
		c.exp.ExpectCreates(key, plan.Create)
		_, err := c.createPods(ctx, key, obj, s, plan.Create)
		return err
	case len(plan.Delete) > 0:
		c.exp.Forget(key)
		for _, p := range plan.Delete {
			c.exp.ExpectDelete(key, p.Name)
		}
		return c.deletePods(ctx, key, obj, s, plan.Delete)
	}
	return nil
}

// NewPod builds a pod of s's template as upstream's GetPodFromTemplate:
// the template's labels, annotations, finalizers and spec, generateName
// "<set>-" (truncated as the API server would) and the set as controller.
func NewPod(k *Kind, s *Set) (*api.Pod, error) {
	if s.Template == nil {
		return nil, fmt.Errorf("%s: %s/%s has no pod template", k.ControllerName, s.Namespace, s.Name)
	}
	var spec api.PodSpec
	b, err := json.Marshal(&s.Template.Spec)
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: copy pod template: %w", k.ControllerName, err)
	}
	prefix := s.Name + "-"
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength]
	}
	return &api.Pod{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{
			GenerateName:    prefix,
			Namespace:       s.Namespace,
			Labels:          maps.Clone(s.Template.Labels),
			Annotations:     maps.Clone(s.Template.Annotations),
			Finalizers:      slices.Clone(s.Template.Finalizers),
			OwnerReferences: []api.OwnerReference{k.controllerRef(s)},
		},
		Spec: spec,
	}, nil
}

// SlowStart runs fn count times in batches of 1, 2, 4, ... (upstream's
// slowStartBatch): the calls of one batch run at once, and no batch starts
// after one with a failure. It returns how many calls succeeded and the
// failures.
func SlowStart(count int, fn func() error) (int, error) {
	done := 0
	var errs []error
	for batch, left := 1, count; left > 0; batch *= 2 {
		n := min(batch, left)
		left -= n
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range n {
			wg.Go(func() {
				err := fn()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				done++
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			break
		}
	}
	return done, errors.Join(errs...)
}

// createPods creates count pods in slow-start batches. Every pod not
// created (failed, or never tried after a failing batch) lowers the
// expectations. A create refused because the namespace is being
// terminated is no error, as upstream: every later one would fail too.
func (c *Controller) createPods(ctx context.Context, key string, obj api.Object, s *Set, count int) (int, error) {
	var created atomic.Int64
	_, err := SlowStart(count, func() error {
		pod, err := NewPod(&c.kind, s)
		if err == nil {
			err = c.client.Create(ctx, c.podInfo, s.Namespace, pod)
		}
		if err != nil {
			if namespaceTerminating(err) {
				return nil
			}
			if ctx.Err() == nil {
				c.event(obj, api.EventTypeWarning, EventFailedCreate, "Error creating: %v", err)
			}
			return fmt.Errorf("%s: %s: create pod: %w", c.kind.ControllerName, key, err)
		}
		created.Add(1)
		c.event(obj, api.EventTypeNormal, EventSuccessfulCreate, "Created pod: %s", pod.Name)
		return nil
	})
	n := int(created.Load())
	for range count - n {
		c.exp.CountedCreateObserved(key)
	}
	return n, err
}

func namespaceTerminating(err error) bool {
	return client.IsForbidden(err) && strings.Contains(err.Error(), "because it is being terminated")
}

// deletePods deletes pods (uid preconditions), a few at a time. A failed
// deletion lowers the expectations; a pod already gone counts as deleted.
func (c *Controller) deletePods(ctx context.Context, key string, obj api.Object, s *Set, pods []*api.Pod) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, deleteParallelism)
	for _, p := range pods {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := c.client.Delete(ctx, c.podInfo, s.Namespace, p.Name, client.DeleteOptions{Preconditions: &client.Preconditions{UID: p.UID}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				c.event(obj, api.EventTypeNormal, EventSuccessfulDelete, "Deleted pod: %s", p.Name)
			case client.IsNotFound(err):
				c.exp.DeleteObserved(key, p.Name)
			default:
				c.exp.DeleteObserved(key, p.Name)
				if ctx.Err() == nil {
					c.event(obj, api.EventTypeWarning, EventFailedDelete, "Error deleting: %v", err)
				}
				errs = append(errs, fmt.Errorf("%s: %s: delete pod %s: %w", c.kind.ControllerName, key, p.Name, err))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeStatus writes st through the status subresource unless it equals
// the stored status. A conflict (a stale cache) is retried once on a live
// read, as upstream's updateReplicaSetStatus.
func (c *Controller) writeStatus(ctx context.Context, obj api.Object, s *Set, st api.ReplicaSetStatus) error {
	oldJSON, err1 := json.Marshal(s.Status)
	newJSON, err2 := json.Marshal(st)
	if err1 == nil && err2 == nil && bytes.Equal(oldJSON, newJSON) {
		return nil
	}
	for try := 0; ; try++ {
		upd, err := c.kind.withStatus(obj, st)
		if err != nil {
			return err
		}
		err = c.client.Update(ctx, c.setInfo, s.Namespace, upd, "status")
		if err == nil || try > 0 || !client.IsConflict(err) {
			if err != nil {
				return fmt.Errorf("%s: %s/%s: update status: %w", c.kind.ControllerName, s.Namespace, s.Name, err)
			}
			return nil
		}
		fresh := c.setInfo.New()
		if err := c.client.Get(ctx, c.setInfo, s.Namespace, s.Name, fresh); err != nil {
			return fmt.Errorf("%s: %s/%s: update status: %w", c.kind.ControllerName, s.Namespace, s.Name, err)
		}
		if fresh.GetObjectMeta().UID != s.UID {
			return nil
		}
		obj = fresh
	}
}
