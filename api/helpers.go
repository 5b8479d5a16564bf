package api

// ScaleOf builds the autoscaling/v1 Scale of a Deployment or StatefulSet
// (GET .../scale); ok is false for any other object.
func ScaleOf(obj Object) (s *Scale, ok bool) {
	var spec, status int32
	var sel *LabelSelector
	switch o := obj.(type) {
	case *Deployment:
		if o.Spec.Replicas != nil {
			spec = *o.Spec.Replicas
		}
		status, sel = o.Status.Replicas, o.Spec.Selector
	case *StatefulSet:
		if o.Spec.Replicas != nil {
			spec = *o.Spec.Replicas
		}
		status, sel = o.Status.Replicas, o.Spec.Selector
	default:
		return nil, false
	}
	m := obj.GetObjectMeta()
	return &Scale{
		TypeMeta: TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp,
		},
		Spec:   ScaleSpec{Replicas: spec},
		Status: ScaleStatus{Replicas: status, Selector: SelectorString(sel)},
	}, true
}

// SetReplicas sets spec.replicas of a Deployment or StatefulSet (PUT or
// PATCH .../scale); ok is false for any other object.
func SetReplicas(obj Object, replicas int32) (ok bool) {
	switch o := obj.(type) {
	case *Deployment:
		o.Spec.Replicas = &replicas
	case *StatefulSet:
		o.Spec.Replicas = &replicas
	default:
		return false
	}
	return true
}

// GetPodCondition returns the pod's condition of type t, or nil.
func GetPodCondition(s *PodStatus, t string) *PodCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(p *Pod) bool {
	c := GetPodCondition(&p.Status, PodReady)
	return c != nil && c.Status == ConditionTrue
}

// ControllerRef returns the owner reference with controller: true, or nil.
func ControllerRef(m *ObjectMeta) *OwnerReference {
	for i := range m.OwnerReferences {
		if r := &m.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}
