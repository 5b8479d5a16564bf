package job

import (
	"maps"
	"strconv"

	"github.com/skiff-dev/skiff/api"
)

// CompletionIndexEnv is the variable an Indexed Job's containers get their
// index in (from the annotation, through the downward API).
const CompletionIndexEnv = "JOB_COMPLETION_INDEX"

func controllerRef(j *api.Job) api.OwnerReference {
	yes := true
	return api.OwnerReference{
		APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// newPod builds a pod of j from its template, as Kubernetes' Job
// controller does: generateName <job>- (Indexed: <job>-<index>-), the
// template's labels and annotations, a controller ownerReference, the
// batch.kubernetes.io/job-tracking finalizer; an Indexed pod also gets the
// completion index as annotation and label, hostname <job>-<index>, and
// JOB_COMPLETION_INDEX in every container and init container; with
// backoffLimitPerIndex, the index's failure count annotation.
func newPod(j *api.Job, c Create) *api.Pod {
	t := &j.Spec.Template
	spec := api.DeepCopy(&api.Pod{Spec: t.Spec}).Spec
	labels := maps.Clone(t.Labels)
	annotations := maps.Clone(t.Annotations)
	gen := j.Name + "-"
	if c.Index != noIndex {
		idx := strconv.Itoa(c.Index)
		if labels == nil {
			labels = map[string]string{}
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		labels[api.JobCompletionIndexAnnotation] = idx
		annotations[api.JobCompletionIndexAnnotation] = idx
		if j.Spec.BackoffLimitPerIndex != nil {
			annotations[api.JobIndexFailureCountAnnotation] = strconv.Itoa(c.FailureCount)
		}
		gen = j.Name + "-" + idx + "-"
		spec.Hostname = j.Name + "-" + idx
		env := api.EnvVar{Name: CompletionIndexEnv, ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{
			APIVersion: "v1", FieldPath: "metadata.annotations['" + api.JobCompletionIndexAnnotation + "']",
		}}}
		for _, cs := range [][]api.Container{spec.InitContainers, spec.Containers} {
			for i := range cs {
				cs[i].Env = append(cs[i].Env, env)
			}
		}
	}
	return &api.Pod{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{
			GenerateName:    gen,
			Namespace:       j.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []api.OwnerReference{controllerRef(j)},
			Finalizers:      []string{api.JobTrackingFinalizer},
		},
		Spec: spec,
	}
}
