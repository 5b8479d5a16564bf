package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
)

// saPullSecrets is the part of upstream's ServiceAccount admission plugin
// (plugin/pkg/admission/serviceaccount) that gives a new pod its
// ServiceAccount's imagePullSecrets: on create, a pod that lists none
// gets those of the ServiceAccount it runs as (spec.serviceAccountName,
// "default" when unset), in order. A mirror pod, a pod that lists its
// own, or a ServiceAccount that does not exist (yet) leaves the pod as it
// is; later changes of the ServiceAccount do not reach existing pods.
type saPullSecrets struct{ sa *api.ResourceInfo }

// ValidatesOnly: the hook changes a pod only on create, which the API
// server always encodes after admission; an update it admits unchanged,
// so the update path may encode before the transaction
// (apiserver.ValidatingHook) and pod status writes stay out of the
// store's commit loop.
func (saPullSecrets) ValidatesOnly() {}

func (h saPullSecrets) Admit(_ context.Context, tx store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	pod, ok := a.Obj.(*api.Pod)
	if a.Op != apiserver.OpCreate || a.Subresource != "" || !ok || len(pod.Spec.ImagePullSecrets) > 0 {
		return apiserver.Outcome{}, nil
	}
	if _, mirror := pod.Annotations["kubernetes.io/config.mirror"]; mirror {
		return apiserver.Outcome{}, nil
	}
	name := cmp.Or(pod.Spec.ServiceAccountName, api.ServiceAccountDefault)
	kv, ok, err := tx.Get(apiserver.KeyFor(h.sa, pod.Namespace, name))
	if err != nil || !ok {
		return apiserver.Outcome{}, err
	}
	var sa api.ServiceAccount
	if err := json.Unmarshal(kv.Value, &sa); err != nil {
		return apiserver.Outcome{}, fmt.Errorf("decode %s: %w", kv.Key, err)
	}
	for _, ref := range sa.ImagePullSecrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, api.LocalObjectReference{Name: ref.Name})
	}
	return apiserver.Outcome{}, nil
}
