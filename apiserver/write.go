package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/store"
)

// errDryRun aborts a transaction on purpose (dryRun=All).
var errDryRun = errors.New("apiserver: dry run")

// hookRun collects the outcomes of the hooks one transaction called.
type hookRun struct {
	dryRun   bool
	outcomes []Outcome
}

// abort runs and forgets the OnAbort of every outcome collected so far.
func (h *hookRun) abort() {
	for _, o := range h.outcomes {
		if o.OnAbort != nil {
			o.OnAbort()
		}
	}
	h.outcomes = h.outcomes[:0]
}

func (h *hookRun) commit() {
	for _, o := range h.outcomes {
		if o.OnCommit != nil {
			o.OnCommit()
		}
	}
	h.outcomes = nil
}

// write runs fn in one store transaction and then tells every hook that fn
// called how it ended. A dry run (fn returning errDryRun) counts as success
// for the caller but as an abort for the hooks.
func (s *Server) write(ctx context.Context, dryRun bool, fn func(tx store.Txn, run *hookRun) error) error {
	run := &hookRun{dryRun: dryRun}
	_, err := s.store.Update(ctx, func(tx store.Txn) (err error) {
		// A store may run closures on its own goroutine (group commit): a
		// panic must become this request's error, not the process's end.
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("apiserver: panic in write transaction", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				err = NewInternal(fmt.Errorf("panic: %v", v))
			}
		}()
		run.abort() // outcomes of an earlier attempt of this closure
		if err := fn(tx, run); err != nil {
			return err
		}
		if dryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil {
		run.abort()
		if errors.Is(err, errDryRun) {
			return nil
		}
		return err
	}
	run.commit()
	return nil
}

// admit offers a write to the resource's hook.
func (s *Server) admit(ctx context.Context, tx store.Txn, run *hookRun, r *resource, a Admission) error {
	if r.hook == nil {
		return nil
	}
	a.DryRun = run.dryRun
	out, err := r.hook.Admit(ctx, tx, a)
	run.outcomes = append(run.outcomes, out)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) {
			return se
		}
		return NewInternal(fmt.Errorf("admission of %s: %w", r.qualified, err))
	}
	return nil
}

type nsLight struct {
	Metadata struct {
		DeletionTimestamp *api.Time `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Finalizers []string `json:"finalizers"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// checkNamespace enforces, inside the creating transaction, that the
// namespace exists and is not terminating.
func (s *Server) checkNamespace(tx store.Txn, r *resource, ns, name string) error {
	if !r.info.Namespaced || s.nsRes == nil {
		return nil
	}
	kv, ok, err := tx.Get(KeyFor(s.nsRes.info, "", ns))
	if err != nil {
		return err
	}
	if !ok {
		return NewNotFound("namespaces", ns)
	}
	var n nsLight
	if err := json.Unmarshal(kv.Value, &n); err != nil {
		return fmt.Errorf("apiserver: decoding namespace %s: %w", ns, err)
	}
	if n.Metadata.DeletionTimestamp != nil || n.Status.Phase == "Terminating" {
		return NewForbidden(r.qualified, name, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	}
	return nil
}

func isDryRun(r *http.Request) bool {
	for _, v := range r.URL.Query()["dryRun"] {
		if v == "All" {
			return true
		}
	}
	return false
}

// checkBodyMeta fills an empty body namespace/name from the path and
// rejects ones that differ.
func (h *handler) checkBodyMeta(obj api.Object, fillName bool) error {
	meta := obj.GetObjectMeta()
	if h.r.info.Namespaced {
		if meta.Namespace == "" {
			meta.Namespace = h.ns
		} else if meta.Namespace != h.ns {
			return NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		meta.Namespace = ""
	}
	if h.name != "" {
		if meta.Name == "" && fillName {
			meta.Name = h.name
		} else if meta.Name != h.name {
			return NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", meta.Name, h.name))
		}
	}
	return nil
}

func (h *handler) create() {
	ctx := h.req.Context()
	obj, err := h.readObject(false)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	r := h.r
	meta := obj.GetObjectMeta()
	meta.UID = newUID()
	meta.CreationTimestamp = api.NewTime(h.s.now())
	meta.Generation = 1
	meta.ResourceVersion = ""
	meta.DeletionTimestamp = nil
	meta.DeletionGracePeriodSeconds = nil
	meta.ManagedFields = nil
	generated := meta.Name == "" && meta.GenerateName != ""
	if generated {
		meta.Name = meta.GenerateName + nameSuffix()
	}
	if r.info.PrepareForCreate != nil {
		// The resource's own create rules: status cleared (set only through
		// /status), generation for resources that track it.
		r.info.PrepareForCreate(obj)
	}
	if r.isNamespaces {
		if obj, err = prepareNamespaceCreate(r, obj); err != nil {
			writeErr(h.w, err)
			return
		}
		meta = obj.GetObjectMeta()
	}
	if r.info.Default != nil {
		r.info.Default(obj)
	}
	errs := validateMeta(r, meta)
	if r.info.ValidateCreate != nil {
		errs = append(errs, r.info.ValidateCreate(obj)...)
	}
	if len(errs) > 0 {
		writeError(h.w, NewInvalid(r.qualifiedKind, meta.Name, errs))
		return
	}
	var raw []byte
	err = h.s.write(ctx, isDryRun(h.req), func(tx store.Txn, run *hookRun) error {
		if err := h.s.checkNamespace(tx, r, meta.Namespace, meta.Name); err != nil {
			return err
		}
		key := KeyFor(r.info, meta.Namespace, meta.Name)
		for try := 0; ; try++ {
			_, exists, err := tx.Get(key)
			if err != nil {
				return err
			}
			if !exists {
				break
			}
			if !generated || try == 8 {
				return NewAlreadyExists(r.qualified, meta.Name)
			}
			meta.Name = meta.GenerateName + nameSuffix()
			key = KeyFor(r.info, meta.Namespace, meta.Name)
		}
		if err := h.s.admit(ctx, tx, run, r, Admission{Op: OpCreate, Obj: obj}); err != nil {
			return err
		}
		raw, err = r.encode(obj, tx.Revision())
		if err != nil {
			return err
		}
		if err := checkObjectSize(r, meta.Name, len(raw)); err != nil {
			return err
		}
		return tx.Put(key, raw)
	})
	if err != nil {
		writeErr(h.w, err)
		return
	}
	h.writeObject(http.StatusCreated, raw)
}

// writeObject sends a stored object a write returns, through the view
// (the apiVersion of a custom resource's version).
func (h *handler) writeObject(code int, raw []byte) {
	out, err := h.out(raw)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	writeRaw(h.w, code, out)
}

// prepareNamespaceCreate does what Kubernetes' namespace strategy does on
// create: status.phase Active and the "kubernetes" spec finalizer.
func prepareNamespaceCreate(r *resource, obj api.Object) (api.Object, error) {
	return editJSON(r, obj, func(m map[string]any) error {
		spec := childMap(m, "spec")
		fins, _ := spec["finalizers"].([]any)
		if !slices.Contains(fins, any("kubernetes")) {
			spec["finalizers"] = append(fins, "kubernetes")
		}
		childMap(m, "status")["phase"] = "Active"
		return nil
	})
}

// storedIn reads the object the request names in tx: NotFound when there
// is none.
func (h *handler) storedIn(tx store.Txn) (store.KeyValue, error) {
	kv, ok, err := tx.Get(KeyFor(h.r.info, h.ns, h.name))
	if err != nil {
		return kv, err
	}
	if !ok {
		return kv, NewNotFound(h.r.qualified, h.name)
	}
	return kv, nil
}

func (h *handler) get() {
	kv, err := h.s.store.Get(h.req.Context(), KeyFor(h.r.info, h.ns, h.name))
	if errors.Is(err, store.ErrNotFound) {
		writeError(h.w, NewNotFound(h.r.qualified, h.name))
		return
	}
	if err != nil {
		writeErr(h.w, err)
		return
	}
	raw, err := h.out(kv.Value)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	writeRaw(h.w, http.StatusOK, raw)
}

// update serves PUT on the object and on its status.
func (h *handler) update() {
	ctx := h.req.Context()
	obj, err := h.readObject(true)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	// A retry starts again from the body as decoded: the update edits obj.
	body, err := json.Marshal(obj)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	tries := 0
	raw, _, err := h.guaranteedUpdate(ctx, isDryRun(h.req), func(store.KeyValue) (api.Object, []string, error) {
		if tries++; tries == 1 {
			return obj, nil, nil
		}
		o, err := h.r.decode(body)
		return o, nil, err
	})
	if err != nil {
		writeErr(h.w, err)
		return
	}
	h.writeObject(http.StatusOK, raw)
}

// patch serves PATCH on the object and on its status. The patch is applied
// to the stored object outside the transaction and committed only if the
// object has not changed since (guaranteedUpdate), so it never conflicts
// unless it sets metadata.resourceVersion itself.
func (h *handler) patch() {
	ctx := h.req.Context()
	fv, pt, body, err := h.readRequestAs(patchType)
	if err == nil && pt == mediaStrategicPatch && h.r.custom {
		err = NewUnsupportedMediaType(pt, mediaJSONPatch, mediaMergePatch)
	}
	if err != nil {
		writeErr(h.w, err)
		return
	}
	raw, warnings, err := h.guaranteedUpdate(ctx, isDryRun(h.req), func(kv store.KeyValue) (api.Object, []string, error) {
		original := kv.Value
		if h.r.convert != nil {
			if original, err = h.r.convert(original); err != nil {
				return nil, nil, err
			}
		}
		patched, err := h.s.applyPatch(ctx, pt, original, body)
		if err != nil {
			return nil, nil, err
		}
		obj, warnings, err := decodeJSON(h.r.info, patched, fv)
		if err != nil {
			return nil, nil, err
		}
		return obj, warnings, h.checkBodyMeta(obj, false)
	})
	addWarnings(h.w, warnings)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	h.writeObject(http.StatusOK, raw)
}

func patchType(r *http.Request) (string, error) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := parseMediaTypeFast(ct)
	if err == nil {
		switch mt {
		case mediaMergePatch, mediaJSONPatch, mediaStrategicPatch:
			return mt, nil
		}
	}
	return "", NewUnsupportedMediaType(ct, mediaJSONPatch, mediaMergePatch, mediaStrategicPatch)
}

func (s *Server) applyPatch(ctx context.Context, pt string, original, patch []byte) ([]byte, error) {
	out, err := s.patcher(ctx, pt, original, patch)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) {
			return nil, se
		}
		return nil, NewBadRequest(fmt.Sprintf("error applying patch: %v", err))
	}
	return out, nil
}

// shouldDelete: an object being deleted whose last finalizer is gone (and
// whose grace period is over) is removed by the update itself.
func (r *resource) shouldDelete(obj api.Object) (bool, error) {
	m := obj.GetObjectMeta()
	if m.DeletionTimestamp == nil || len(m.Finalizers) > 0 {
		return false, nil
	}
	if m.DeletionGracePeriodSeconds != nil && *m.DeletionGracePeriodSeconds > 0 {
		return false, nil
	}
	if r.isNamespaces {
		b, err := json.Marshal(obj)
		if err != nil {
			return false, err
		}
		var n nsLight
		if err := json.Unmarshal(b, &n); err != nil {
			return false, err
		}
		if len(n.Spec.Finalizers) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// editJSON lets fn edit obj as a generic JSON map and decodes the result
// into a new object of r's type.
func editJSON(r *resource, obj api.Object, fn func(m map[string]any) error) (api.Object, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return editRaw(r, b, fn)
}

func editRaw(r *resource, raw []byte, fn func(m map[string]any) error) (api.Object, error) {
	m, err := decodeMap(raw)
	if err != nil {
		return nil, err
	}
	if err := fn(m); err != nil {
		return nil, err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := r.info.New()
	if err := json.Unmarshal(b, out); err != nil {
		return nil, NewBadRequest(fmt.Sprintf("error decoding %s: %v", r.info.Kind, err))
	}
	return out, nil
}

func decodeMap(raw []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("apiserver: decoding object: %w", err)
	}
	if m == nil {
		m = make(map[string]any)
	}
	return m, nil
}

// childMap returns m[k] as a map, creating it when absent or not a map.
func childMap(m map[string]any, k string) map[string]any {
	c, ok := m[k].(map[string]any)
	if !ok {
		c = make(map[string]any)
		m[k] = c
	}
	return c
}
