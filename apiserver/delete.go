package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/store"
)

// Finalizers the deletion propagation policies add, as Kubernetes names them.
const (
	finalizerForeground = "foregroundDeletion"
	finalizerOrphan     = "orphan"
)

// deleteOptions is meta/v1 DeleteOptions.
type deleteOptions struct {
	Kind               string         `json:"kind,omitempty"`
	APIVersion         string         `json:"apiVersion,omitempty"`
	GracePeriodSeconds *int64         `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *preconditions `json:"preconditions,omitempty"`
	OrphanDependents   *bool          `json:"orphanDependents,omitempty"`
	PropagationPolicy  *string        `json:"propagationPolicy,omitempty"`
	DryRun             []string       `json:"dryRun,omitempty"`
}

type preconditions struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// parseDeleteOptions reads DeleteOptions from the body (if any) and the
// query (which wins), and resolves the propagation policy and dry run.
func (h *handler) parseDeleteOptions() (opts *deleteOptions, policy string, dryRun bool, err error) {
	opts, policy, err = h.deleteOptions()
	if err != nil {
		return nil, "", false, err
	}
	return opts, policy, isDryRun(h.req) || slices.Contains(opts.DryRun, dryRunAll), nil
}

func (h *handler) deleteOptions() (*deleteOptions, string, error) {
	opts := &deleteOptions{}
	fv, err := parseFieldValidation(h.req)
	if err != nil {
		return nil, "", err
	}
	body, err := readBody(h.req, h.s.maxBody)
	if err != nil {
		return nil, "", err
	}
	if len(body) > 0 {
		mt, err := mediaType(h.req)
		if err != nil {
			return nil, "", err
		}
		if _, err := decodeInto(mt, body, fv, opts); err != nil {
			return nil, "", err
		}
		if opts.Kind != "" && opts.Kind != "DeleteOptions" {
			return nil, "", NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (DeleteOptions)", opts.Kind))
		}
		if err := validateDryRun("DeleteOptions", opts.DryRun); err != nil {
			return nil, "", err
		}
	}
	q := h.req.URL.Query()
	if v := q.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, "", NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", v))
		}
		opts.GracePeriodSeconds = &n
	}
	if v := q.Get("propagationPolicy"); v != "" {
		opts.PropagationPolicy = &v
	}
	if v := q.Get("orphanDependents"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, "", NewBadRequest(fmt.Sprintf("invalid orphanDependents %q", v))
		}
		opts.OrphanDependents = &b
	}
	policy := "Background"
	switch {
	case opts.PropagationPolicy != nil:
		policy = *opts.PropagationPolicy
		switch policy {
		case "Background", "Foreground", "Orphan":
		default:
			return nil, "", NewInvalid("DeleteOptions", "", field.ErrorList{field.NotSupported(
				field.NewPath("propagationPolicy"), policy, []string{"Background", "Foreground", "Orphan"})})
		}
	case opts.OrphanDependents != nil && *opts.OrphanDependents:
		policy = "Orphan"
	case opts.OrphanDependents != nil:
		policy = "Foreground"
	}
	return opts, policy, nil
}

func (h *handler) delete() {
	opts, policy, dry, err := h.parseDeleteOptions()
	if err != nil {
		writeErr(h.w, err)
		return
	}
	ctx := h.req.Context()
	var raw []byte
	err = h.s.write(ctx, dry, func(tx store.Txn, run *hookRun) error {
		kv, err := h.storedIn(tx)
		if err != nil {
			return err
		}
		raw, err = h.s.deleteStored(ctx, tx, run, h.r, kv, opts, policy)
		return err
	})
	if err != nil {
		writeErr(h.w, err)
		return
	}
	h.writeObject(http.StatusOK, raw)
}

type podLight struct {
	Spec struct {
		NodeName                      string `json:"nodeName"`
		TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// deleteStored deletes one stored object inside tx, or, when finalizers,
// a pod's grace period or a namespace's spec finalizers keep it, marks it
// with deletionTimestamp. It returns the object as sent back.
func (s *Server) deleteStored(ctx context.Context, tx store.Txn, run *hookRun, r *resource, kv store.KeyValue, opts *deleteOptions, policy string) ([]byte, error) {
	obj, err := r.decode(kv.Value)
	if err != nil {
		return nil, err
	}
	meta := obj.GetObjectMeta()
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != meta.UID {
			//lint:ignore ST1005 kube-apiserver's exact text, which clients match
			return nil, NewConflict(r.qualified, meta.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, meta.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != meta.ResourceVersion {
			//lint:ignore ST1005 kube-apiserver's exact text, which clients match
			return nil, NewConflict(r.qualified, meta.Name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, meta.ResourceVersion))
		}
	}
	now := s.now()
	changed, pending := false, false
	if r.isPods {
		var p podLight
		if err := json.Unmarshal(kv.Value, &p); err != nil {
			return nil, fmt.Errorf("apiserver: decoding pod: %w", err)
		}
		grace := int64(30)
		if p.Spec.TerminationGracePeriodSeconds != nil {
			grace = *p.Spec.TerminationGracePeriodSeconds
		}
		if opts.GracePeriodSeconds != nil {
			grace = *opts.GracePeriodSeconds
		}
		if grace < 0 {
			grace = 1
		}
		terminal := p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed"
		if p.Spec.NodeName != "" && grace > 0 && !terminal {
			deadline := api.NewTime(now.Add(time.Duration(grace) * time.Second))
			if meta.DeletionTimestamp == nil || deadline.Before(meta.DeletionTimestamp.Time) {
				meta.DeletionTimestamp = &deadline
				meta.DeletionGracePeriodSeconds = &grace
				changed = true
			}
			pending = true
		}
	}
	if !pending && meta.DeletionGracePeriodSeconds != nil && *meta.DeletionGracePeriodSeconds != 0 {
		zero := int64(0)
		meta.DeletionGracePeriodSeconds = &zero
		changed = true
	}
	if r.isNamespaces {
		if meta.DeletionTimestamp != nil {
			//lint:ignore ST1005 kube-apiserver's exact text, which clients match
			return nil, NewConflict(r.qualified, meta.Name, fmt.Errorf("The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system."))
		}
		var n nsLight
		if err := json.Unmarshal(kv.Value, &n); err != nil {
			return nil, fmt.Errorf("apiserver: decoding namespace: %w", err)
		}
		pending = pending || len(n.Spec.Finalizers) > 0
	}
	switch policy {
	case "Foreground":
		changed = addFinalizer(meta, finalizerForeground, finalizerOrphan) || changed
	case "Orphan":
		changed = addFinalizer(meta, finalizerOrphan, finalizerForeground) || changed
	}
	if len(meta.Finalizers) > 0 || pending {
		if meta.DeletionTimestamp == nil {
			t := api.NewTime(now)
			zero := int64(0)
			meta.DeletionTimestamp, meta.DeletionGracePeriodSeconds = &t, &zero
			changed = true
		}
		if !changed {
			return kv.Value, nil
		}
		if r.isNamespaces {
			if obj, err = editJSON(r, obj, func(m map[string]any) error {
				childMap(m, "status")["phase"] = "Terminating"
				return nil
			}); err != nil {
				return nil, err
			}
		}
		old, err := r.decode(kv.Value)
		if err != nil {
			return nil, err
		}
		if err := s.admit(ctx, tx, run, r, Admission{Op: OpUpdate, Obj: obj, Old: old}); err != nil {
			return nil, err
		}
		raw, err := r.encode(obj, tx.Revision())
		if err != nil {
			return nil, err
		}
		return raw, tx.Put(kv.Key, raw)
	}
	if err := s.admit(ctx, tx, run, r, Admission{Op: OpDelete, Obj: obj}); err != nil {
		return nil, err
	}
	if err := tx.Delete(kv.Key); err != nil {
		return nil, err
	}
	return kv.Value, nil
}

// addFinalizer adds f and removes conflicting; it reports a change.
func addFinalizer(meta *api.ObjectMeta, f, conflicting string) bool {
	changed := false
	if i := slices.Index(meta.Finalizers, conflicting); i >= 0 {
		meta.Finalizers = slices.Delete(meta.Finalizers, i, i+1)
		changed = true
	}
	if !slices.Contains(meta.Finalizers, f) {
		meta.Finalizers = append(meta.Finalizers, f)
		changed = true
	}
	return changed
}

// deleteCollection deletes every object matching the selectors, one
// transaction each, and returns the list of what was deleted (or marked).
func (h *handler) deleteCollection() {
	f, err := h.s.newFilter(h.r, h.req.URL.Query())
	if err != nil {
		writeErr(h.w, err)
		return
	}
	opts, policy, dry, err := h.parseDeleteOptions()
	if err != nil {
		writeErr(h.w, err)
		return
	}
	ctx := h.req.Context()
	res, err := h.s.store.List(ctx, h.listPrefix(), store.ListOptions{})
	if err != nil {
		writeErr(h.w, err)
		return
	}
	items := make([]json.RawMessage, 0, len(res.Items))
	for _, item := range res.Items {
		ok, err := f.matches(item.Value)
		if err != nil {
			writeErr(h.w, err)
			return
		}
		if !ok {
			continue
		}
		var raw []byte
		err = h.s.write(ctx, dry, func(tx store.Txn, run *hookRun) error {
			kv, ok, err := tx.Get(item.Key)
			if err != nil || !ok {
				return err // gone meanwhile: nothing to do
			}
			raw, err = h.s.deleteStored(ctx, tx, run, h.r, kv, opts, policy)
			return err
		})
		if err != nil {
			writeErr(h.w, err)
			return
		}
		if raw != nil {
			if raw, err = h.out(raw); err != nil {
				writeErr(h.w, err)
				return
			}
			items = append(items, raw)
		}
	}
	rev, err := h.s.store.Revision(ctx)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	writeJSON(h.w, http.StatusOK, map[string]any{
		"kind":       h.r.info.ListKind,
		"apiVersion": h.r.info.GroupVersion(),
		"metadata":   map[string]any{"resourceVersion": strconv.FormatInt(rev, 10)},
		"items":      items,
	})
}
