package api

// ScaleOf builds the autoscaling/v1 Scale of a Deployment, StatefulSet,
// ReplicaSet or ReplicationController
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
	case *ReplicaSet:
		if o.Spec.Replicas != nil {
			spec = *o.Spec.Replicas
		}
		status, sel = o.Status.Replicas, o.Spec.Selector
	case *ReplicationController:
		if o.Spec.Replicas != nil {
			spec = *o.Spec.Replicas
		}
		status, sel = o.Status.Replicas, &LabelSelector{MatchLabels: o.Spec.Selector}
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

// SetReplicas sets spec.replicas of a scalable object (PUT or
// PATCH .../scale); ok is false for any other object.
func SetReplicas(obj Object, replicas int32) (ok bool) {
	switch o := obj.(type) {
	case *Deployment:
		o.Spec.Replicas = &replicas
	case *StatefulSet:
		o.Spec.Replicas = &replicas
	case *ReplicaSet:
		o.Spec.Replicas = &replicas
	case *ReplicationController:
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

// FindPort resolves a Service port's targetPort on pod, as Kubernetes'
// FindPort: a number is used as is (0, unset, means the Service port); a
// name is looked up among the container ports (and those of sidecar init
// containers, restartPolicy Always) with the same protocol. The
// EndpointSlice and Endpoints controllers both use it.
func FindPort(pod *Pod, sp *ServicePort) (int32, bool) {
	tp := sp.TargetPort
	if tp.Type != String {
		if tp.IntVal == 0 {
			return sp.Port, true
		}
		return tp.IntVal, true
	}
	proto := sp.Protocol
	if proto == "" {
		proto = ProtocolTCP
	}
	match := func(cs []Container, sidecarsOnly bool) (int32, bool) {
		for _, c := range cs {
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != RestartPolicyAlways) {
				continue
			}
			for _, p := range c.Ports {
				pp := p.Protocol
				if pp == "" {
					pp = ProtocolTCP
				}
				if p.Name == tp.StrVal && pp == proto {
					return p.ContainerPort, true
				}
			}
		}
		return 0, false
	}
	if n, ok := match(pod.Spec.Containers, false); ok {
		return n, true
	}
	return match(pod.Spec.InitContainers, true)
}
