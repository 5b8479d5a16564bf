// Package history keeps a workload's ControllerRevisions, as upstream's
// pkg/controller/history and the DaemonSet and StatefulSet controllers'
// use of it do:
//
//   - A revision is named <owner>-<hash> (a StatefulSet's owner part cut
//     so that the name fits a label value, as its pods carry it) and labelled
//     controller-revision-hash=<hash>, hash being the owner controller's
//     template hash (for Skiff the FNV-32a hash of the template and the
//     collision count that its pods are labelled with); it carries the
//     template's labels, the owner's annotations (kubectl shows
//     kubernetes.io/change-cause from them), a controller ownerReference,
//     and Data, the patch
//     that restores the template: {"spec":{"template":{...,"$patch":
//     "replace"}}} (upstream's getPatch), which `kubectl rollout undo`
//     applies as a strategic merge patch.
//   - Sync makes the revision of the current template exist and be the
//     newest: a new one gets the next number (the largest plus one); one
//     that exists already (a rollback to its template) is renumbered to
//     the next number unless it is the newest. Two revisions of the same
//     hash (which only a race makes) are folded into the newest.
//   - A revision name taken by a revision of different data (a hash
//     collision) is an ErrCollision: the owner's controller bumps
//     status.collisionCount and tries again with the new hash.
//   - Truncate keeps the current revision, every revision a live pod is
//     labelled with, and the limit (revisionHistoryLimit) newest of the
//     others; it deletes the rest, oldest first.
//
// Not done: adoption of orphan revisions matching the owner's selector
// (upstream's ClaimControllerRevisions); a revision is the owner's only
// by its controller ownerReference.
package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Client is what History writes with; *client.Client satisfies it.
type Client interface {
	Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error
	Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, subresource ...string) error
	Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error
	Get(ctx context.Context, info *api.ResourceInfo, ns, name string, into api.Object) error
}

// Cache is what History reads of a ControllerRevision informer.
type Cache interface {
	ByIndex(name, value string) []api.Object
}

// ErrCollision says a revision name is taken by another template: the
// caller bumps its collision count and syncs again.
var ErrCollision = errors.New("history: hash collision")

// History reads and writes the ControllerRevisions of one kind of owner.
type History struct {
	client Client
	cache  Cache
	info   *api.ResourceInfo
}

// New returns a History over a ControllerRevision informer of all
// namespaces (with client.NamespaceIndex) and a client.
func New(c Client, cache Cache) *History {
	return &History{client: c, cache: cache, info: api.Lookup(api.Resources(), "apps/v1", "controllerrevisions")}
}

// Owned are the revisions controlled by the owner of uid in ns, sorted by
// revision number (then creation, then name), oldest first.
func (h *History) Owned(ns string, uid string) []*api.ControllerRevision {
	var out []*api.ControllerRevision
	for _, o := range h.cache.ByIndex(client.NamespaceIndex, ns) {
		r, ok := o.(*api.ControllerRevision)
		if !ok {
			continue
		}
		if ref := api.ControllerRef(&r.ObjectMeta); ref != nil && ref.UID == uid {
			out = append(out, r)
		}
	}
	Sort(out)
	return out
}

// Sort orders revisions as upstream's SortControllerRevisions: by
// revision number, then creation time, then name.
func Sort(revs []*api.ControllerRevision) {
	slices.SortStableFunc(revs, func(a, b *api.ControllerRevision) int {
		if a.Revision != b.Revision {
			if a.Revision < b.Revision {
				return -1
			}
			return 1
		}
		if !a.CreationTimestamp.Time.Equal(b.CreationTimestamp.Time) {
			if a.CreationTimestamp.Time.Before(b.CreationTimestamp.Time) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Next is the number a new newest revision gets: the largest plus one.
func Next(revs []*api.ControllerRevision) int64 {
	var n int64
	for _, r := range revs {
		n = max(n, r.Revision)
	}
	return n + 1
}

// Name is a revision's name: the owner's, cut to leave room, a dash and
// the hash (upstream's ControllerRevisionName).
func Name(owner, hash string) string {
	if len(owner) > 223 {
		owner = owner[:223]
	}
	return owner + "-" + hash
}

// TemplatePatch is the Data of a revision of template: the patch that
// restores it, {"spec":{"template":{...,"$patch":"replace"}}}.
func TemplatePatch(template *api.PodTemplateSpec) (json.RawMessage, error) {
	b, err := json.Marshal(template)
	if err != nil {
		return nil, err
	}
	var t map[string]any
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	t["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": t}})
}

// Owner is what a revision records of its owner.
type Owner struct {
	Meta *api.ObjectMeta
	Ref  api.OwnerReference // the controller ownerReference
	// Template is the current template; Hash its hash (the revision's
	// label); Name, when set, the revision's name instead of
	// Name(owner, Hash) (a StatefulSet's, cut to fit a label value).
	Template   *api.PodTemplateSpec
	Hash, Name string
}

// Sync makes the revision of o's current template exist and be the
// newest of revs (o's revisions, from Owned), and returns it.
func (h *History) Sync(ctx context.Context, o Owner, revs []*api.ControllerRevision) (*api.ControllerRevision, error) {
	data, err := TemplatePatch(o.Template)
	if err != nil {
		return nil, fmt.Errorf("history: %s/%s: %w", o.Meta.Namespace, o.Meta.Name, err)
	}
	var cur []*api.ControllerRevision
	for _, r := range revs {
		if r.Labels[api.LabelControllerRevisionHash] == o.Hash {
			cur = append(cur, r)
		}
	}
	next := Next(revs)
	if len(cur) == 0 {
		return h.create(ctx, o, data, next)
	}
	keep := cur[len(cur)-1] // the newest (revs are sorted)
	for _, dup := range cur[:len(cur)-1] {
		if err := h.delete(ctx, dup); err != nil {
			return nil, err
		}
	}
	if keep.Revision == next-1 {
		return keep, nil
	}
	upd := api.DeepCopy(keep)
	upd.Revision = next
	if err := h.client.Update(ctx, h.info, upd.Namespace, upd); err != nil {
		return nil, fmt.Errorf("history: renumber %s/%s: %w", upd.Namespace, upd.Name, err)
	}
	return upd, nil
}

func (h *History) create(ctx context.Context, o Owner, data json.RawMessage, revision int64) (*api.ControllerRevision, error) {
	labels := maps.Clone(o.Template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[api.LabelControllerRevisionHash] = o.Hash
	name := o.Name
	if name == "" {
		name = Name(o.Meta.Name, o.Hash)
	}
	r := &api.ControllerRevision{
		ObjectMeta: api.ObjectMeta{
			Name: name, Namespace: o.Meta.Namespace, Labels: labels,
			// The owner's, as upstream copies them: kubectl rollout
			// history shows kubernetes.io/change-cause from here.
			Annotations:     maps.Clone(o.Meta.Annotations),
			OwnerReferences: []api.OwnerReference{o.Ref},
		},
		Data: data, Revision: revision,
	}
	err := h.client.Create(ctx, h.info, r.Namespace, r)
	if err == nil {
		return r, nil
	}
	if !client.IsAlreadyExists(err) {
		return nil, fmt.Errorf("history: create %s/%s: %w", r.Namespace, r.Name, err)
	}
	// Taken: by the same template (a cache behind our own create), or by
	// another one (a collision).
	var have api.ControllerRevision
	if gerr := h.client.Get(ctx, h.info, r.Namespace, r.Name, &have); gerr != nil {
		return nil, fmt.Errorf("history: create %s/%s: %w", r.Namespace, r.Name, err)
	}
	ref := api.ControllerRef(&have.ObjectMeta)
	if ref != nil && ref.UID == o.Ref.UID && api.JSONEqual(have.Data, data) {
		return &have, nil
	}
	return nil, fmt.Errorf("%w: %s/%s holds another template", ErrCollision, r.Namespace, r.Name)
}

func (h *History) delete(ctx context.Context, r *api.ControllerRevision) error {
	err := h.client.Delete(ctx, h.info, r.Namespace, r.Name, client.DeleteOptions{Preconditions: &client.Preconditions{UID: r.UID}})
	if err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("history: delete %s/%s: %w", r.Namespace, r.Name, err)
	}
	return nil
}

// Truncate deletes o's old revisions beyond limit (revisionHistoryLimit),
// oldest first, never the current one (cur) nor one a live pod carries
// (live: the pods' controller-revision-hash values, which are a
// revision's hash for a DaemonSet and its name for a StatefulSet).
func (h *History) Truncate(ctx context.Context, revs []*api.ControllerRevision, cur *api.ControllerRevision, live map[string]bool, limit int32) error {
	var old []*api.ControllerRevision
	for _, r := range revs {
		if cur != nil && r.Name == cur.Name {
			continue
		}
		if live[r.Labels[api.LabelControllerRevisionHash]] || live[r.Name] {
			continue
		}
		old = append(old, r)
	}
	var errs []error
	for i := 0; i < len(old)-int(max(limit, 0)); i++ {
		errs = append(errs, h.delete(ctx, old[i]))
	}
	return errors.Join(errs...)
}
