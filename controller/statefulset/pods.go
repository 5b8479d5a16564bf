package statefulset

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"

	"github.com/skiff-dev/skiff/api"
)

// Labels the controller puts on its pods, as Kubernetes does.
const (
	// PodNameLabel is the pod's own name, so a Service can select one pod.
	PodNameLabel = "statefulset.kubernetes.io/pod-name"
	// PodIndexLabel is the pod's ordinal.
	PodIndexLabel = "apps.kubernetes.io/pod-index"
	// RevisionLabel is the revision of the template the pod was made from.
	RevisionLabel = "controller-revision-hash"
)

// maxLabelValue is the length limit of a label value.
const maxLabelValue = 63

// safeAlphabet is Kubernetes' rand.SafeEncodeString alphabet: no vowels
// (no words) and no confusable characters.
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// safeEncode maps each byte of s into safeAlphabet, as Kubernetes'
// rand.SafeEncodeString does for revision hashes.
func safeEncode(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = safeAlphabet[int(c)%len(safeAlphabet)]
	}
	return string(b)
}

// revisionName names the revision of set's pod template:
// <set>-<hash>, where hash is the FNV-32a of the template's JSON, safe
// encoded, as Kubernetes names ControllerRevisions. The set name is cut so
// that the whole fits a label value.
func revisionName(set *api.StatefulSet) (string, error) {
	data, err := json.Marshal(set.Spec.Template)
	if err != nil {
		return "", fmt.Errorf("statefulset: hash template of %s/%s: %w", set.Namespace, set.Name, err)
	}
	h := fnv.New32a()
	h.Write(data)
	hash := safeEncode(strconv.FormatUint(uint64(h.Sum32()), 10))
	prefix := set.Name
	if n := maxLabelValue - len(hash) - 1; len(prefix) > n {
		prefix = prefix[:n]
	}
	return prefix + "-" + hash, nil
}

// controllerRef is the ownerReference of set's pods.
func controllerRef(set *api.StatefulSet) api.OwnerReference {
	yes := true
	return api.OwnerReference{
		APIVersion: "apps/v1", Kind: "StatefulSet", Name: set.Name, UID: set.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// newPod builds the pod of ordinal from tmpl at revision: name
// <set>-<ordinal>, the template's labels plus the pod-name, pod-index and
// revision labels, the template's annotations, a controller
// ownerReference, hostname = its name and subdomain = spec.serviceName.
func newPod(set *api.StatefulSet, ordinal int, revision string, tmpl *api.PodTemplateSpec) *api.Pod {
	name := podName(set.Name, ordinal)
	labels := maps.Clone(tmpl.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[PodNameLabel] = name
	labels[PodIndexLabel] = strconv.Itoa(ordinal)
	labels[RevisionLabel] = revision
	spec := api.DeepCopy(&api.Pod{Spec: tmpl.Spec}).Spec
	spec.Hostname = name
	spec.Subdomain = set.Spec.ServiceName
	setStorage(set, ordinal, &spec) // claims.go
	return &api.Pod{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{
			Name:            name,
			Namespace:       set.Namespace,
			Labels:          labels,
			Annotations:     maps.Clone(tmpl.Annotations),
			OwnerReferences: []api.OwnerReference{controllerRef(set)},
		},
		Spec: spec,
	}
}

// templateFromPod recovers the template a pod was made from (its labels
// without the ones the controller adds, its annotations, its spec without
// the node binding and identity), to recreate a pod at an older revision.
// Skiff keeps no ControllerRevisions: a live pod of that revision is the
// only record of its template.
func templateFromPod(p *api.Pod) *api.PodTemplateSpec {
	c := api.DeepCopy(p)
	labels := maps.Clone(c.Labels)
	delete(labels, PodNameLabel)
	delete(labels, PodIndexLabel)
	delete(labels, RevisionLabel)
	spec := c.Spec
	spec.NodeName, spec.Hostname, spec.Subdomain = "", "", ""
	return &api.PodTemplateSpec{
		ObjectMeta: api.ObjectMeta{Labels: labels, Annotations: c.Annotations},
		Spec:       spec,
	}
}

// templateFor picks the template of revision: spec.template for the update
// revision, else the one its ControllerRevision holds (stored, non-nil),
// else one recovered from a live pod of that revision. When none is
// left, the update revision is used instead.
func templateFor(set *api.StatefulSet, pods []*api.Pod, revision string, rev revisions, stored func(string) *api.PodTemplateSpec) (*api.PodTemplateSpec, string) {
	if revision != rev.update {
		if t := stored(revision); t != nil {
			return t, revision
		}
		for _, p := range pods {
			if p.Labels[RevisionLabel] == revision && p.DeletionTimestamp == nil {
				return templateFromPod(p), revision
			}
		}
		for _, p := range pods {
			if p.Labels[RevisionLabel] == revision {
				return templateFromPod(p), revision
			}
		}
	}
	return &set.Spec.Template, rev.update
}
