package apiextensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
)

// Served is what the registry drives: the API server's set of custom
// resources (apiserver.Server).
type Served interface {
	// CheckCustomResources says whether res could be served, changing
	// nothing; SetCustomResources serves res in place of the set before.
	CheckCustomResources(res []apiserver.CustomResource) error
	SetCustomResources(res []apiserver.CustomResource) error
}

// Registry keeps the served custom resources equal to the stored
// definitions: Sync reads every definition and replaces the served set,
// the Hook syncs after each committed write of a definition (so a
// definition is served when its create returns), and Run syncs again on
// every change the store reports (another writer, a restore).
type Registry struct {
	st     store.Interface
	served Served
	info   *api.ResourceInfo // customresourcedefinitions
	prefix string
	log    *slog.Logger

	mu sync.Mutex // one Sync at a time; guards the fields below
	// preferred is one entry per definition, its preferred version;
	// changed is closed (and replaced) when preferred changes.
	preferred []*api.ResourceInfo
	changed   chan struct{}
}

// Current returns the custom resources served now, one entry per
// definition (its preferred version), and a channel closed at the next
// change: what controllers that act on every resource (garbage collection,
// namespace deletion) follow, as upstream's follow discovery.
func (r *Registry) Current() ([]*api.ResourceInfo, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return slices.Clone(r.preferred), r.changed
}

// sameResources reports whether two preferred sets name the same
// group/version/resource/kind/scope entries.
func sameResources(a, b []*api.ResourceInfo) bool {
	return slices.EqualFunc(a, b, func(x, y *api.ResourceInfo) bool {
		return x.GroupVersion() == y.GroupVersion() && x.Resource == y.Resource && x.Kind == y.Kind && x.Namespaced == y.Namespaced
	})
}

// NewRegistry returns a registry of the definitions stored in st under
// the key prefix of info (CRDResource's entry).
func NewRegistry(st store.Interface, info *api.ResourceInfo, served Served, log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{st: st, served: served, info: info, prefix: apiserver.KeyFor(info, "", ""), log: log}
}

// Sync serves the custom resources of every stored definition. A
// definition the API server cannot serve (its names clash with another's)
// is skipped and logged; the others are served.
func (r *Registry) Sync(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.st.List(ctx, r.prefix, store.ListOptions{})
	if err != nil {
		return fmt.Errorf("apiextensions: list definitions: %w", err)
	}
	var crds []*CustomResourceDefinition
	for _, kv := range res.Items {
		c, err := decodeCRD(kv.Value)
		if err != nil {
			r.log.Error("undecodable definition", "key", kv.Key, "err", err)
			continue
		}
		crds = append(crds, c)
	}
	// Oldest first, so that of two clashing definitions the first one
	// created keeps being served.
	sort.SliceStable(crds, func(i, j int) bool {
		return crds[i].CreationTimestamp.Time.Before(crds[j].CreationTimestamp.Time)
	})
	var served []apiserver.CustomResource
	var preferred []*api.ResourceInfo
	for _, c := range crds {
		mine := ResourceInfos(c)
		if len(mine) == 0 {
			continue // no served version
		}
		next := served[:len(served):len(served)]
		g := definitionGuard{key: apiserver.KeyFor(r.info, "", c.Name), uid: c.UID, name: c.Name}
		for _, info := range mine {
			next = append(next, apiserver.CustomResource{Info: info, Hook: g})
		}
		if err := r.served.CheckCustomResources(next); err != nil {
			r.log.Warn("definition not served", "name", c.Name, "err", err)
			continue
		}
		served = next
		preferred = append(preferred, mine[0])
	}
	if err := r.served.SetCustomResources(served); err != nil {
		return err
	}
	sort.Slice(preferred, func(i, j int) bool {
		a, b := preferred[i], preferred[j]
		return a.Group < b.Group || (a.Group == b.Group && a.Resource < b.Resource)
	})
	if !sameResources(preferred, r.preferred) {
		r.preferred = preferred
		if r.changed != nil {
			close(r.changed)
		}
		r.changed = make(chan struct{})
	}
	return nil
}

// Run syncs on every change of a definition until ctx ends, re-watching
// after an error with a short pause.
func (r *Registry) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := r.watch(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("definition watch ended", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (r *Registry) watch(ctx context.Context) error {
	rev, err := r.st.Revision(ctx)
	if err != nil {
		return err
	}
	if err := r.Sync(ctx); err != nil {
		return err
	}
	ch, err := r.st.Watch(ctx, r.prefix, rev, store.WatchOptions{})
	if err != nil {
		return err
	}
	for ev := range ch {
		switch ev.Type {
		case store.EventError:
			return ev.Err
		case store.EventPut, store.EventDelete:
			if err := r.Sync(ctx); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// Hook is the TxnHook of customresourcedefinitions: a definition whose
// names clash with another's (kind, listKind, singular or a short name
// already used in its group) is refused, a deleted definition's objects
// are deleted in the same transaction, and every committed write syncs
// the served set before the response is sent.
func (r *Registry) Hook() apiserver.TxnHook { return hook{r} }

type hook struct{ r *Registry }

func (h hook) Admit(ctx context.Context, tx store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	c, ok := a.Obj.(*CustomResourceDefinition)
	if !ok || c == nil {
		return apiserver.Outcome{}, errors.New("apiextensions: not a CustomResourceDefinition")
	}
	sync := apiserver.Outcome{OnCommit: func() {
		if err := h.r.Sync(context.WithoutCancel(ctx)); err != nil {
			h.r.log.Error("sync after a definition write", "err", err)
		}
	}}
	switch a.Op {
	case apiserver.OpCreate, apiserver.OpUpdate:
		if err := h.checkNames(tx, c); err != nil {
			return apiserver.Outcome{}, err
		}
	case apiserver.OpDelete:
		if a.DryRun {
			return apiserver.Outcome{}, nil
		}
		kvs, err := tx.List(ObjectPrefix(c))
		if err != nil {
			return apiserver.Outcome{}, err
		}
		for _, kv := range kvs {
			if err := tx.Delete(kv.Key); err != nil {
				return apiserver.Outcome{}, err
			}
		}
	}
	return sync, nil
}

// checkNames refuses a definition whose names another definition of the
// group already uses (upstream accepts it with NamesAccepted False and
// serves nothing; refusing says so at once): 422 naming the field.
func (h hook) checkNames(tx store.Txn, c *CustomResourceDefinition) error {
	kvs, err := tx.List(h.r.prefix)
	if err != nil {
		return err
	}
	theirs := map[string]string{} // name → the definition using it
	for _, kv := range kvs {
		o, err := decodeCRD(kv.Value)
		if err != nil || o.Name == c.Name || o.Spec.Group != c.Spec.Group {
			continue
		}
		for _, n := range namesOf(o.Spec.Names) {
			theirs[n.value] = o.Name
		}
	}
	var errs field.ErrorList
	for _, n := range namesOf(c.Spec.Names) {
		if other, clash := theirs[n.value]; clash {
			errs = append(errs, field.Invalid(n.path, n.value, "is already in use by "+other))
		}
	}
	if len(errs) > 0 {
		return apiserver.NewInvalid("CustomResourceDefinition.apiextensions.k8s.io", c.Name, errs)
	}
	return nil
}

type namedField struct {
	path  *field.Path
	value string
}

func namesOf(n CustomResourceDefinitionNames) []namedField {
	p := field.NewPath("spec", "names")
	out := []namedField{{p.Child("plural"), n.Plural}, {p.Child("singular"), n.Singular},
		{p.Child("kind"), n.Kind}, {p.Child("listKind"), n.ListKind}}
	for i, s := range n.ShortNames {
		out = append(out, namedField{p.Child("shortNames").Index(i), s})
	}
	return slices.DeleteFunc(out, func(f namedField) bool { return f.value == "" })
}

// definitionGuard is the TxnHook of a definition's custom resources: a
// write commits only while the definition it was served for (same uid) is
// stored, so that no object outlives its definition's deletion, whose
// transaction deletes them all (a request that began before it is 404).
type definitionGuard struct {
	key, uid, name string
}

func (g definitionGuard) ValidatesOnly() {}

func (g definitionGuard) Admit(ctx context.Context, tx store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	if a.Op == apiserver.OpDelete {
		return apiserver.Outcome{}, nil
	}
	kv, ok, err := tx.Get(g.key)
	if err != nil {
		return apiserver.Outcome{}, err
	}
	if ok {
		var c struct {
			Metadata struct {
				UID string `json:"uid"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(kv.Value, &c); err == nil && c.Metadata.UID == g.uid {
			return apiserver.Outcome{}, nil
		}
	}
	return apiserver.Outcome{}, apiserver.NewNotFound("customresourcedefinitions.apiextensions.k8s.io", g.name)
}
