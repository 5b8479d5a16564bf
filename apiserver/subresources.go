package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/store"
)

// scale is autoscaling/v1 Scale.
type scale struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta `json:"metadata"`
	Spec         scaleSpec      `json:"spec"`
	Status       scaleStatus    `json:"status"`
}

type scaleSpec struct {
	Replicas int32 `json:"replicas,omitempty"`
}

type scaleStatus struct {
	Replicas int32  `json:"replicas"`
	Selector string `json:"selector,omitempty"`
}

// scalable is what a scale-able object shares, read generically.
type scalable struct {
	Metadata api.ObjectMeta `json:"metadata"`
	Spec     struct {
		Replicas *int32          `json:"replicas"`
		Selector json.RawMessage `json:"selector"`
	} `json:"spec"`
	Status struct {
		Replicas int32 `json:"replicas"`
	} `json:"status"`
}

// buildScale derives the Scale of a stored object.
func buildScale(r *resource, raw []byte) (*scale, error) {
	if r.info.Scale != nil {
		return buildScaleAt(r.info.Scale, raw)
	}
	var o scalable
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("apiserver: decoding scalable object: %w", err)
	}
	sc := &scale{
		TypeMeta: api.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		Metadata: api.ObjectMeta{
			Name:              o.Metadata.Name,
			Namespace:         o.Metadata.Namespace,
			UID:               o.Metadata.UID,
			ResourceVersion:   o.Metadata.ResourceVersion,
			CreationTimestamp: o.Metadata.CreationTimestamp,
		},
		Status: scaleStatus{Replicas: o.Status.Replicas},
	}
	if o.Spec.Replicas != nil {
		sc.Spec.Replicas = *o.Spec.Replicas
	}
	sel, err := selectorString(o.Spec.Selector)
	if err != nil {
		return nil, err
	}
	sc.Status.Selector = sel
	return sc, nil
}

// buildScaleAt derives the Scale of a stored custom object from its
// scale paths, as upstream's custom resource scale does: a missing or
// non-integer replicas field is 0, the selector is the string at its path.
func buildScaleAt(p *api.ScalePaths, raw []byte) (*scale, error) {
	m, err := decodeMap(raw)
	if err != nil {
		return nil, err
	}
	var meta api.ObjectMeta
	if md, ok := m["metadata"]; ok {
		b, err := json.Marshal(md)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return nil, fmt.Errorf("apiserver: decoding metadata: %w", err)
		}
	}
	sc := &scale{
		TypeMeta: api.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		Metadata: api.ObjectMeta{
			Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID,
			ResourceVersion: meta.ResourceVersion, CreationTimestamp: meta.CreationTimestamp,
		},
	}
	replicas := func(path []string) int32 {
		n, ok := valueAt(m, path).(json.Number)
		if !ok {
			return 0
		}
		i, err := n.Int64()
		if err != nil || i < 0 || i > 1<<31-1 {
			return 0
		}
		return int32(i)
	}
	sc.Spec.Replicas = replicas(p.SpecReplicas)
	sc.Status.Replicas = replicas(p.StatusReplicas)
	if p.LabelSelector != nil {
		sc.Status.Selector, _ = valueAt(m, p.LabelSelector).(string)
	}
	return sc, nil
}

// valueAt is the value at path in m; nil when absent.
func valueAt(m map[string]any, path []string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// setAt sets the value at path in m, making the maps on the way.
func setAt(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		m = childMap(m, k)
	}
	m[path[len(path)-1]] = v
}

// selectorString renders spec.selector (a LabelSelector, or a plain map
// as on Services) as a label selector string, requirements sorted by key.
func selectorString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return "", fmt.Errorf("apiserver: decoding spec.selector: %w", err)
	}
	_, hasML := top["matchLabels"]
	_, hasME := top["matchExpressions"]
	type req struct{ key, text string }
	var reqs []req
	if hasML || hasME {
		var ls struct {
			MatchLabels      map[string]string `json:"matchLabels"`
			MatchExpressions []struct {
				Key      string   `json:"key"`
				Operator string   `json:"operator"`
				Values   []string `json:"values"`
			} `json:"matchExpressions"`
		}
		if err := json.Unmarshal(raw, &ls); err != nil {
			return "", fmt.Errorf("apiserver: decoding spec.selector: %w", err)
		}
		for k, v := range ls.MatchLabels {
			reqs = append(reqs, req{k, k + "=" + v})
		}
		for _, e := range ls.MatchExpressions {
			vals := append([]string(nil), e.Values...)
			sort.Strings(vals)
			switch e.Operator {
			case "In":
				reqs = append(reqs, req{e.Key, e.Key + " in (" + strings.Join(vals, ",") + ")"})
			case "NotIn":
				reqs = append(reqs, req{e.Key, e.Key + " notin (" + strings.Join(vals, ",") + ")"})
			case "Exists":
				reqs = append(reqs, req{e.Key, e.Key})
			case "DoesNotExist":
				reqs = append(reqs, req{e.Key, "!" + e.Key})
			default:
				return "", fmt.Errorf("apiserver: %q is not a valid label selector operator", e.Operator)
			}
		}
	} else {
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return "", fmt.Errorf("apiserver: decoding spec.selector: %w", err)
		}
		for k, v := range m {
			reqs = append(reqs, req{k, k + "=" + v})
		}
	}
	sort.SliceStable(reqs, func(i, j int) bool {
		if reqs[i].key != reqs[j].key {
			return reqs[i].key < reqs[j].key
		}
		return reqs[i].text < reqs[j].text
	})
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.text
	}
	return strings.Join(parts, ","), nil
}

func (h *handler) getScale() {
	kv, err := h.s.store.Get(h.req.Context(), KeyFor(h.r.info, h.ns, h.name))
	if errors.Is(err, store.ErrNotFound) {
		writeError(h.w, NewNotFound(h.r.qualified, h.name))
		return
	}
	if err != nil {
		writeErr(h.w, err)
		return
	}
	sc, err := buildScale(h.r, kv.Value)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	writeJSON(h.w, http.StatusOK, sc)
}

// updateScale serves PUT and PATCH of /scale: it sets spec.replicas of the
// object and runs the normal update path.
func (h *handler) updateScale(patch bool) {
	ctx := h.req.Context()
	contentType := mediaType
	if patch {
		contentType = patchType
	}
	fv, ct, body, err := h.readRequestAs(contentType)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	var warnings []string
	var put scale
	if !patch {
		if warnings, err = decodeInto(ct, body, fv, &put); err != nil {
			writeErr(h.w, err)
			return
		}
	}
	var raw []byte
	err = h.s.write(ctx, isDryRun(h.req), func(tx store.Txn, run *hookRun) error {
		kv, err := h.storedIn(tx)
		if err != nil {
			return err
		}
		sc := put
		if patch {
			cur, err := buildScale(h.r, kv.Value)
			if err != nil {
				return err
			}
			curJSON, err := json.Marshal(cur)
			if err != nil {
				return err
			}
			patched, err := h.s.applyPatch(ctx, ct, curJSON, body)
			if err != nil {
				return err
			}
			sc = scale{}
			if warnings, err = decodeInto(mediaJSON, patched, fv, &sc); err != nil {
				return err
			}
		}
		if sc.Kind != "" && sc.Kind != "Scale" || sc.APIVersion != "" && sc.APIVersion != "autoscaling/v1" {
			return NewBadRequest(fmt.Sprintf("the body must be an autoscaling/v1 Scale, not %s %s", sc.APIVersion, sc.Kind))
		}
		if sc.Metadata.Name != "" && sc.Metadata.Name != h.name {
			return NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", sc.Metadata.Name, h.name))
		}
		if sc.Metadata.ResourceVersion != "" && sc.Metadata.ResourceVersion != fmt.Sprint(kv.ModRevision) {
			return NewConflict(h.r.qualified, h.name, errModified)
		}
		if sc.Spec.Replicas < 0 {
			return NewInvalid("Scale.autoscaling", h.name, field.ErrorList{field.Invalid(
				field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
		}
		obj, err := editRaw(h.r, kv.Value, func(m map[string]any) error {
			if p := h.r.info.Scale; p != nil {
				setAt(m, p.SpecReplicas, sc.Spec.Replicas)
				return nil
			}
			childMap(m, "spec")["replicas"] = sc.Spec.Replicas
			return nil
		})
		if err != nil {
			return err
		}
		raw, err = h.applyUpdate(ctx, tx, run, kv, obj, "scale")
		return err
	})
	addWarnings(h.w, warnings)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	sc, err := buildScale(h.r, raw)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	writeJSON(h.w, http.StatusOK, sc)
}

// binding is core/v1 Binding.
type binding struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta `json:"metadata"`
	Target       objectRef      `json:"target"`
}

type objectRef struct {
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	FieldPath       string `json:"fieldPath,omitempty"`
}

// bind serves POST pods/{name}/binding: spec.nodeName is set once, with a
// PodScheduled=True condition.
func (h *handler) bind() {
	ctx := h.req.Context()
	fv, mt, body, err := h.readRequest()
	if err != nil {
		writeErr(h.w, err)
		return
	}
	var b binding
	warnings, err := decodeInto(mt, body, fv, &b)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	addWarnings(h.w, warnings)
	switch {
	case b.Kind != "" && b.Kind != "Binding":
		err = NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (Binding)", b.Kind))
	case b.Metadata.Name != "" && b.Metadata.Name != h.name:
		err = NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Metadata.Name, h.name))
	case b.Metadata.Namespace != "" && b.Metadata.Namespace != h.ns:
		err = NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	case b.Target.Name == "":
		err = NewInvalid("Binding", h.name, field.ErrorList{field.Required(field.NewPath("target", "name"), "")})
	case b.Target.Kind != "" && b.Target.Kind != "Node":
		err = NewInvalid("Binding", h.name, field.ErrorList{field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node"})})
	}
	if err != nil {
		writeErr(h.w, err)
		return
	}
	now := api.NewTime(h.s.now())
	// The new pod is computed outside the store's transaction (the JSON
	// work is most of a binding's cost, and transactions run one at a
	// time), then written if the pod is still the version it was computed
	// from (guaranteedUpdate).
	_, _, err = h.guaranteedUpdate(ctx, isDryRun(h.req), func(kv store.KeyValue) (api.Object, []string, error) {
		var p struct {
			Metadata api.ObjectMeta `json:"metadata"`
			podLight
		}
		if err := json.Unmarshal(kv.Value, &p); err != nil {
			return nil, nil, fmt.Errorf("apiserver: decoding pod: %w", err)
		}
		if p.Metadata.DeletionTimestamp != nil {
			return nil, nil, NewConflict("pods/binding", h.name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", h.name))
		}
		if p.Spec.NodeName != "" {
			return nil, nil, NewConflict("pods/binding", h.name, fmt.Errorf("pod %s is already assigned to node %q", h.name, p.Spec.NodeName))
		}
		if b.Metadata.UID != "" && b.Metadata.UID != p.Metadata.UID {
			//lint:ignore ST1005 kube-apiserver's exact text, which clients match
			return nil, nil, NewConflict("pods/binding", h.name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.Metadata.UID, p.Metadata.UID))
		}
		nowJSON, _ := json.Marshal(now)
		obj, err := editRaw(h.r, kv.Value, func(m map[string]any) error {
			childMap(m, "spec")["nodeName"] = b.Target.Name
			if len(b.Metadata.Annotations) > 0 {
				ann := childMap(childMap(m, "metadata"), "annotations")
				for k, v := range b.Metadata.Annotations {
					ann[k] = v
				}
			}
			status := childMap(m, "status")
			conds, _ := status["conditions"].([]any)
			cond := map[string]any{"type": "PodScheduled", "status": "True",
				"lastProbeTime": nil, "lastTransitionTime": json.RawMessage(nowJSON)}
			replaced := false
			for i, c := range conds {
				if cm, ok := c.(map[string]any); ok && cm["type"] == "PodScheduled" {
					if cm["status"] == "True" {
						cond["lastTransitionTime"] = cm["lastTransitionTime"]
					}
					conds[i], replaced = cond, true
				}
			}
			if !replaced {
				conds = append(conds, cond)
			}
			status["conditions"] = conds
			return nil
		})
		return obj, nil, err
	})
	if err != nil {
		writeErr(h.w, err)
		return
	}
	writeJSON(h.w, http.StatusCreated, api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   "Success",
		Code:     http.StatusCreated,
	})
}

// logs serves pods/{name}/log through Config.PodLogs.
func (h *handler) logs() {
	ctx := h.req.Context()
	if h.s.podLogs == nil {
		writeError(h.w, newStatusError(http.StatusNotFound, api.StatusReasonNotFound,
			fmt.Sprintf("no log source is configured: cannot get logs of pod %s/%s", h.ns, h.name), nil))
		return
	}
	if _, err := h.s.store.Get(ctx, KeyFor(h.r.info, h.ns, h.name)); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			writeError(h.w, NewNotFound(h.r.qualified, h.name))
			return
		}
		writeErr(h.w, err)
		return
	}
	rc, err := h.s.podLogs(ctx, h.ns, h.name, h.req.URL.Query())
	if err != nil {
		writeErr(h.w, err)
		return
	}
	defer rc.Close()
	h.w.Header().Set("Content-Type", "text/plain")
	h.w.WriteHeader(http.StatusOK)
	flusher, _ := h.w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			if _, werr := h.w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				h.s.log.Debug("apiserver: pod log stream ended", "pod", h.ns+"/"+h.name, "err", err)
			}
			return
		}
	}
}

// stream serves pods/{name}/exec, attach and portforward through
// Config.PodStream: 404 for a missing pod, else the stream function
// upgrades the connection or answers an error.
func (h *handler) stream() {
	ctx := h.req.Context()
	if h.s.podStream == nil {
		writeError(h.w, newStatusError(http.StatusNotFound, api.StatusReasonNotFound,
			fmt.Sprintf("no node API is configured: cannot %s pod %s/%s", h.sub, h.ns, h.name), nil))
		return
	}
	if _, err := h.s.store.Get(ctx, KeyFor(h.r.info, h.ns, h.name)); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			writeError(h.w, NewNotFound(h.r.qualified, h.name))
			return
		}
		writeErr(h.w, err)
		return
	}
	if err := h.s.podStream(h.w, h.req, h.ns, h.name, h.sub); err != nil {
		writeErr(h.w, err)
	}
}

// finalize serves PUT namespaces/{name}/finalize: it replaces
// spec.finalizers; a terminating namespace left with no finalizers is
// removed in the same transaction.
func (h *handler) finalize() {
	ctx := h.req.Context()
	obj, err := h.readObject(true)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	jb, err := json.Marshal(obj)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	var n nsLight
	if err := json.Unmarshal(jb, &n); err != nil {
		writeErr(h.w, err)
		return
	}
	for i, f := range n.Spec.Finalizers {
		if f == "" {
			writeError(h.w, NewInvalid(h.r.qualifiedKind, h.name, field.ErrorList{
				field.Required(field.NewPath("spec", "finalizers").Index(i), "")}))
			return
		}
	}
	rv := obj.GetObjectMeta().ResourceVersion
	var raw []byte
	err = h.s.write(ctx, isDryRun(h.req), func(tx store.Txn, run *hookRun) error {
		kv, err := h.storedIn(tx)
		if err != nil {
			return err
		}
		if rv != "" && rv != fmt.Sprint(kv.ModRevision) {
			return NewConflict(h.r.qualified, h.name, errModified)
		}
		next, err := editRaw(h.r, kv.Value, func(m map[string]any) error {
			spec := childMap(m, "spec")
			if len(n.Spec.Finalizers) == 0 {
				delete(spec, "finalizers")
			} else {
				spec["finalizers"] = n.Spec.Finalizers
			}
			return nil
		})
		if err != nil {
			return err
		}
		raw, err = h.applyUpdate(ctx, tx, run, kv, next, "finalize")
		return err
	})
	if err != nil {
		writeErr(h.w, err)
		return
	}
	writeRaw(h.w, http.StatusOK, raw)
}
