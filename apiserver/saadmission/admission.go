package saadmission

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
)

// Names and values of the token volume, as upstream.
const (
	// VolumeNamePrefix starts the name of the token volume.
	VolumeNamePrefix = "kube-api-access-"
	// MountPath is where every container finds the token, ca.crt and namespace.
	MountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// RootCAConfigMap is the ConfigMap of the cluster's CA in every namespace.
	RootCAConfigMap = "kube-root-ca.crt"
	// TokenExpirationSeconds is the lifetime the volume asks for (upstream's
	// WarnOnlyBoundTokenExpirationSeconds).
	TokenExpirationSeconds = 3607
)

// mirrorPodAnnotation marks a node's static pod; upstream's plugin leaves
// mirror pods alone (they may not mount a token nor name a ServiceAccount).
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// nameChars are the characters of a generated name suffix (upstream's
// utilrand alphanums: no vowels, no 0, 1 or 3).
const nameChars = "bcdfghjklmnpqrstvwxz2456789"

// Hook is the admission hook. Build it with New.
type Hook struct {
	saInfo *api.ResourceInfo
	// suffix makes the random part of the volume name.
	suffix func() string
}

// New finds the serviceaccounts resource in resources.
func New(resources []*api.ResourceInfo) (*Hook, error) {
	info := api.Lookup(resources, "v1", "serviceaccounts")
	if info == nil {
		return nil, errors.New("saadmission: resource table lacks serviceaccounts")
	}
	return &Hook{saInfo: info, suffix: randomSuffix}, nil
}

func randomSuffix() string {
	var b [5]byte
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(nameChars))))
		if err != nil {
			panic(err) // crypto/rand never fails on Linux
		}
		b[i] = nameChars[n.Int64()]
	}
	return string(b[:])
}

// ValidatesOnly: the hook changes a pod only on create, which the API
// server always encodes after admission; an update it admits unchanged,
// so the update path may encode before the transaction
// (apiserver.ValidatingHook) and pod status writes stay out of the
// store's commit loop.
func (*Hook) ValidatesOnly() {}

// Admit implements apiserver.TxnHook.
func (h *Hook) Admit(ctx context.Context, tx store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	pod, ok := a.Obj.(*api.Pod)
	if !ok || a.Op != apiserver.OpCreate || a.Subresource != "" {
		return apiserver.Outcome{}, nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return apiserver.Outcome{}, nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = api.ServiceAccountDefault
		pod.Spec.DeprecatedServiceAccount = pod.Spec.ServiceAccountName
	}
	sa, err := h.serviceAccount(tx, pod.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return apiserver.Outcome{}, err
	}
	if sa == nil && pod.Spec.ServiceAccountName != api.ServiceAccountDefault {
		return apiserver.Outcome{}, apiserver.NewStatus(http.StatusForbidden, api.StatusReasonForbidden,
			fmt.Sprintf("pods %q is forbidden: error looking up service account %s/%s: serviceaccount %q not found",
				pod.Name, pod.Namespace, pod.Spec.ServiceAccountName, pod.Spec.ServiceAccountName))
	}
	if sa == nil {
		sa = &api.ServiceAccount{}
	}
	if ShouldAutomount(sa, pod) {
		h.mountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = append([]api.LocalObjectReference(nil), sa.ImagePullSecrets...)
	}
	return apiserver.Outcome{}, nil
}

// serviceAccount reads the ServiceAccount in tx; nil when absent.
func (h *Hook) serviceAccount(tx store.Txn, ns, name string) (*api.ServiceAccount, error) {
	kv, ok, err := tx.Get(apiserver.KeyFor(h.saInfo, ns, name))
	if err != nil || !ok {
		return nil, err
	}
	var sa api.ServiceAccount
	if err := json.Unmarshal(kv.Value, &sa); err != nil {
		return nil, fmt.Errorf("saadmission: decode %s: %w", kv.Key, err)
	}
	return &sa, nil
}

// ShouldAutomount is upstream's rule: the pod's
// automountServiceAccountToken when set, else the ServiceAccount's, else
// true.
func ShouldAutomount(sa *api.ServiceAccount, pod *api.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountToken is upstream's mountServiceAccountToken.
func (h *Hook) mountToken(pod *api.Pod) {
	name, has := "", false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, VolumeNamePrefix) {
			name, has = v.Name, true
			break
		}
	}
	if name == "" {
		name = VolumeNamePrefix + h.suffix()
	}
	mount := api.VolumeMount{Name: name, ReadOnly: true, MountPath: MountPath}
	needs := false
	for _, cs := range [][]api.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !mountsAt(&cs[i], MountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needs = true
			}
		}
	}
	if !has && needs {
		pod.Spec.Volumes = append(pod.Spec.Volumes, api.Volume{Name: name, VolumeSource: api.VolumeSource{Projected: TokenVolumeSource()}})
	}
}

func mountsAt(c *api.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// TokenVolumeSource is the projected source of the token volume (with
// the defaults set, as upstream sets them explicitly).
func TokenVolumeSource() *api.ProjectedVolumeSource {
	mode, exp := int32(0o644), int64(TokenExpirationSeconds)
	return &api.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []api.VolumeProjection{
			{ServiceAccountToken: &api.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &api.ConfigMapProjection{
				LocalObjectReference: api.LocalObjectReference{Name: RootCAConfigMap},
				Items:                []api.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}
}
