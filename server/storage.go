package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/persistentvolume"
	"github.com/skiff-dev/skiff/store"
)

// Storage: the built-in local-path StorageClass and the DefaultStorageClass
// admission of claims (controller/persistentvolume binds and provisions).

// binderName is the name the binder is enabled and disabled by.
const binderName = "persistentvolume-binder"

// localPathClass is the StorageClass the server creates at start: the
// default class, provisioned by Skiff's local-path provisioner once a pod
// using the claim is scheduled, deleted with its claim (as k3s's
// local-path class).
func localPathClass() *api.StorageClass {
	reclaim, mode := api.PersistentVolumeReclaimDelete, api.VolumeBindingWaitForFirstConsumer
	return &api.StorageClass{
		ObjectMeta: api.ObjectMeta{Name: persistentvolume.DefaultClassName,
			Annotations: map[string]string{api.AnnIsDefaultStorageClass: "true"}},
		Provisioner:       persistentvolume.Provisioner,
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &mode,
	}
}

// bootstrapStorage creates the local-path class when it is absent (an
// existing one, changed or not, is the user's), unless the binder is
// disabled.
func (s *Server) bootstrapStorage(ctx context.Context, c *client.Client) error {
	if slices.Contains(s.cfg.DisabledControllers, binderName) {
		return nil
	}
	return createIfAbsent(ctx, c, resourceTable(s.resource)["storageclasses.storage.k8s.io"], "", localPathClass())
}

// defaultStorageClass is upstream's DefaultStorageClass admission: a new
// claim without a class (spec.storageClassName unset and no beta
// annotation) gets the default StorageClass, the newest if several are
// marked default; with none it keeps no class (and the binder assigns one
// when a default appears).
//
// With the binder running it is also upstream's
// StorageObjectInUseProtection admission: new claims get the finalizer
// kubernetes.io/pvc-protection and new volumes kubernetes.io/pv-protection,
// which the binder removes once nothing uses them (without the binder
// nothing would, so none is added).
type defaultStorageClass struct {
	classes *api.ResourceInfo
	protect bool
}

func (s *Server) storageHook() defaultStorageClass {
	return defaultStorageClass{classes: resourceTable(s.resource)["storageclasses.storage.k8s.io"],
		protect: !slices.Contains(s.cfg.DisabledControllers, binderName)}
}

// addFinalizer adds f to m once.
func addFinalizer(m *api.ObjectMeta, f string) {
	if !slices.Contains(m.Finalizers, f) {
		m.Finalizers = append(m.Finalizers, f)
	}
}

// ValidatesOnly: the hook changes claims only on create, which the API
// server encodes after admission.
func (defaultStorageClass) ValidatesOnly() {}

// Admit implements apiserver.TxnHook.
func (h defaultStorageClass) Admit(_ context.Context, tx store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	if a.Op != apiserver.OpCreate || a.Subresource != "" {
		return apiserver.Outcome{}, nil
	}
	if pv, ok := a.Obj.(*api.PersistentVolume); ok {
		if h.protect {
			addFinalizer(&pv.ObjectMeta, persistentvolume.PVProtectionFinalizer)
		}
		return apiserver.Outcome{}, nil
	}
	pvc, ok := a.Obj.(*api.PersistentVolumeClaim)
	if !ok {
		return apiserver.Outcome{}, nil
	}
	if h.protect {
		addFinalizer(&pvc.ObjectMeta, persistentvolume.PVCProtectionFinalizer)
	}
	if pvc.Spec.StorageClassName != nil {
		return apiserver.Outcome{}, nil
	}
	if _, beta := pvc.Annotations[api.AnnBetaStorageClass]; beta {
		return apiserver.Outcome{}, nil
	}
	kvs, err := tx.List(apiserver.KeyFor(h.classes, "", ""))
	if err != nil {
		return apiserver.Outcome{}, err
	}
	classes := make([]*api.StorageClass, 0, len(kvs))
	for _, kv := range kvs {
		var sc api.StorageClass
		if err := json.Unmarshal(kv.Value, &sc); err != nil {
			return apiserver.Outcome{}, fmt.Errorf("server: decode %s: %w", kv.Key, err)
		}
		classes = append(classes, &sc)
	}
	if def := api.DefaultStorageClassOf(classes); def != nil {
		name := def.Name
		pvc.Spec.StorageClassName = &name
	}
	return apiserver.Outcome{}, nil
}

// volumeReader reads one PersistentVolume for the node authorizer.
type volumeReader interface {
	// Volume returns the volume; found is false when it does not exist.
	Volume(ctx context.Context, name string) (pv *api.PersistentVolume, found bool, err error)
}

// storeVolumes reads volumes straight from the store.
type storeVolumes struct {
	st   store.Interface
	info *api.ResourceInfo
}

func (v storeVolumes) Volume(ctx context.Context, name string) (*api.PersistentVolume, bool, error) {
	kv, err := v.st.Get(ctx, apiserver.KeyFor(v.info, "", name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var pv api.PersistentVolume
	if err := json.Unmarshal(kv.Value, &pv); err != nil {
		return nil, false, fmt.Errorf("decode persistentvolume %s: %w", name, err)
	}
	return &pv, true, nil
}

// pinnedTo reports whether a volume's node affinity admits only node: every
// term requires kubernetes.io/hostname In [node] (what the local-path
// provisioner writes).
func pinnedTo(pv *api.PersistentVolume, node string) bool {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil || len(na.Required.NodeSelectorTerms) == 0 {
		return false
	}
	for _, t := range na.Required.NodeSelectorTerms {
		ok := false
		for _, r := range t.MatchExpressions {
			if r.Key == persistentvolume.LabelHostname && r.Operator == api.NodeSelectorOpIn && len(r.Values) == 1 && r.Values[0] == node {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// authorizeNodeVolumes: a node may get a PersistentVolume pinned to it or
// bound to a claim one of its pods references (upstream's node authorizer
// follows pod -> claim -> volume), and update or patch a volume pinned to
// it (the agent removes the local-path cleanup finalizer; a volume's
// source and node affinity are immutable anyway). A volume that does not
// exist may be read, so the agent learns it is gone (404).
func (z authorizer) authorizeNodeVolumes(ctx context.Context, node string, a apiserver.Attributes) (apiserver.View, bool, error) {
	if z.volumes == nil || a.Subresource != "" || a.Name == "" || !(a.Verb == "get" || writeVerbs[a.Verb]) {
		return nil, false, nil
	}
	pv, found, err := z.volumes.Volume(ctx, a.Name)
	if err != nil {
		return nil, false, err
	}
	if !found {
		return nil, a.Verb == "get", nil
	}
	if pinnedTo(pv, node) {
		return nil, true, nil
	}
	if a.Verb != "get" || pv.Spec.ClaimRef == nil || z.graph == nil {
		return nil, false, nil
	}
	wctx, cancel := context.WithTimeout(ctx, graphWait)
	defer cancel()
	if !z.graph.waitSynced(wctx) {
		return nil, false, apiserver.NewStatus(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable,
			"the node authorizer has not read the pods yet; retry")
	}
	r := pv.Spec.ClaimRef
	return nil, z.graph.hasRef(node, objRef{"persistentvolumeclaims", r.Namespace, r.Name}), nil
}
