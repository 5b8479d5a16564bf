package replicaset

import (
	"fmt"

	"github.com/skiff-dev/skiff/api"
)

// Set is what the controller needs of a ReplicaSet or a
// ReplicationController, read through a Kind: the two kinds are one
// controller, as upstream converts ReplicationControllers to ReplicaSets
// on the way in and out.
type Set struct {
	Namespace, Name, UID string
	Generation           int64
	Deleting             bool // metadata.deletionTimestamp is set
	Replicas             int32
	MinReadySeconds      int32
	// Selector is the ReplicaSet's selector, or the ReplicationController's
	// map as matchLabels. A nil selector matches no pod.
	Selector *api.LabelSelector
	// Template is the pod template; nil only for an invalid
	// ReplicationController.
	Template *api.PodTemplateSpec
	// Status is the stored status, in ReplicaSet form.
	Status api.ReplicaSetStatus
}

// Kind adapts one of the two API kinds to Set.
type Kind struct {
	// Name is "ReplicaSet" or "ReplicationController", APIVersion
	// "apps/v1" or "v1": the pods' controller ownerReference.
	Name, APIVersion string
	// Resource is "replicasets.apps" or "replicationcontrollers" (the
	// resource table's qualified name) and ControllerName the name it is
	// enabled by ("replicaset", "replicationcontroller").
	Resource, ControllerName string
	// Component is the Events' source, as upstream's
	// ("replicaset-controller", "replication-controller").
	Component string

	group, resource string
	toSet           func(api.Object) (*Set, bool)
	withStatus      func(api.Object, api.ReplicaSetStatus) (api.Object, error)
}

// ReplicaSetKind is apps/v1 ReplicaSet.
var ReplicaSetKind = Kind{
	Name: "ReplicaSet", APIVersion: "apps/v1", Resource: "replicasets.apps", ControllerName: "replicaset",
	Component: "replicaset-controller",
	group:     "apps/v1", resource: "replicasets",
	toSet: func(obj api.Object) (*Set, bool) {
		rs, ok := obj.(*api.ReplicaSet)
		if !ok {
			return nil, false
		}
		s := setOf(&rs.ObjectMeta, rs.Spec.Replicas, rs.Spec.MinReadySeconds)
		s.Selector, s.Template, s.Status = rs.Spec.Selector, &rs.Spec.Template, rs.Status
		return s, true
	},
	withStatus: func(obj api.Object, st api.ReplicaSetStatus) (api.Object, error) {
		rs, ok := obj.(*api.ReplicaSet)
		if !ok {
			return nil, fmt.Errorf("replicaset: object is %T, not a ReplicaSet", obj)
		}
		rs = api.DeepCopy(rs)
		rs.Status = st
		return rs, nil
	},
}

// ReplicationControllerKind is core/v1 ReplicationController.
var ReplicationControllerKind = Kind{
	Name: "ReplicationController", APIVersion: "v1", Resource: "replicationcontrollers", ControllerName: "replicationcontroller",
	Component: "replication-controller",
	group:     "v1", resource: "replicationcontrollers",
	toSet: func(obj api.Object) (*Set, bool) {
		rc, ok := obj.(*api.ReplicationController)
		if !ok {
			return nil, false
		}
		s := setOf(&rc.ObjectMeta, rc.Spec.Replicas, rc.Spec.MinReadySeconds)
		if len(rc.Spec.Selector) > 0 {
			s.Selector = &api.LabelSelector{MatchLabels: rc.Spec.Selector}
		}
		s.Template = rc.Spec.Template
		st := rc.Status
		s.Status = api.ReplicaSetStatus{
			Replicas: st.Replicas, FullyLabeledReplicas: st.FullyLabeledReplicas, ReadyReplicas: st.ReadyReplicas,
			AvailableReplicas: st.AvailableReplicas, ObservedGeneration: st.ObservedGeneration,
		}
		for _, c := range st.Conditions {
			s.Status.Conditions = append(s.Status.Conditions, api.ReplicaSetCondition(c))
		}
		return s, true
	},
	withStatus: func(obj api.Object, st api.ReplicaSetStatus) (api.Object, error) {
		rc, ok := obj.(*api.ReplicationController)
		if !ok {
			return nil, fmt.Errorf("replicaset: object is %T, not a ReplicationController", obj)
		}
		rc = api.DeepCopy(rc)
		rc.Status = api.ReplicationControllerStatus{
			Replicas: st.Replicas, FullyLabeledReplicas: st.FullyLabeledReplicas, ReadyReplicas: st.ReadyReplicas,
			AvailableReplicas: st.AvailableReplicas, ObservedGeneration: st.ObservedGeneration,
		}
		for _, c := range st.Conditions {
			rc.Status.Conditions = append(rc.Status.Conditions, api.ReplicationControllerCondition(c))
		}
		return rc, nil
	},
}

func setOf(m *api.ObjectMeta, replicas *int32, minReady int32) *Set {
	s := &Set{Namespace: m.Namespace, Name: m.Name, UID: m.UID, Generation: m.Generation,
		Deleting: m.DeletionTimestamp != nil, Replicas: 1, MinReadySeconds: minReady}
	if replicas != nil {
		s.Replicas = *replicas
	}
	return s
}

// info is the kind's resource in the table, or nil.
func (k *Kind) info(res []*api.ResourceInfo) *api.ResourceInfo {
	return api.Lookup(res, k.group, k.resource)
}

// owns reports whether ref names this kind (any version of its group).
func (k *Kind) owns(ref *api.OwnerReference) bool {
	return ref.Kind == k.Name && groupOf(ref.APIVersion) == groupOf(k.APIVersion)
}

func groupOf(apiVersion string) string {
	for i := 0; i < len(apiVersion); i++ {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

// controllerRef is the ownerReference the set's pods carry.
func (k *Kind) controllerRef(s *Set) api.OwnerReference {
	t := true
	return api.OwnerReference{APIVersion: k.APIVersion, Kind: k.Name, Name: s.Name, UID: s.UID,
		Controller: &t, BlockOwnerDeletion: &t}
}
