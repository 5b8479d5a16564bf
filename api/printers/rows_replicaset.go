package printers

import (
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- ReplicaSets and ReplicationControllers ----

// The column descriptions kubectl's server-side printer takes from the
// ReplicaSet's and ReplicationController's field docs.
const (
	descRSDesired  = "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset"
	descRSCurrent  = "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset"
	descRSReady    = "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition."
	descRSSelector = "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
	descRCDesired  = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"
	descRCCurrent  = "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"
	descRCReady    = "The number of ready replicas for this replication controller."
	descRCSelector = "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
)

func intCol(name, desc string) Column { return Column{Name: name, Type: "integer", Description: desc} }

func replicaSetColumns() []Column {
	return []Column{
		nameColumn,
		intCol("Desired", descRSDesired),
		intCol("Current", descRSCurrent),
		intCol("Ready", descRSReady),
		ageColumn,
		wide(col("Containers", descContainers)),
		wide(col("Images", descImages)),
		wide(col("Selector", descRSSelector)),
	}
}

// ReplicaSetCells is a ReplicaSet's row: NAME DESIRED CURRENT READY AGE,
// then (wide) CONTAINERS IMAGES SELECTOR.
func ReplicaSetCells(rs *api.ReplicaSet, now time.Time) []any {
	names, images := ContainerCells(rs.Spec.Template.Spec.Containers)
	return []any{
		rs.Name, replicas(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		Age(rs.CreationTimestamp.Time, now), names, images, api.SelectorString(rs.Spec.Selector),
	}
}

func replicationControllerColumns() []Column {
	return []Column{
		nameColumn,
		intCol("Desired", descRCDesired),
		intCol("Current", descRCCurrent),
		intCol("Ready", descRCReady),
		ageColumn,
		wide(col("Containers", descContainers)),
		wide(col("Images", descImages)),
		wide(col("Selector", descRCSelector)),
	}
}

// ReplicationControllerCells is a ReplicationController's row: NAME
// DESIRED CURRENT READY AGE, then (wide) CONTAINERS IMAGES SELECTOR.
func ReplicationControllerCells(rc *api.ReplicationController, now time.Time) []any {
	var names, images string
	if rc.Spec.Template != nil {
		names, images = ContainerCells(rc.Spec.Template.Spec.Containers)
	}
	return []any{
		rc.Name, replicas(rc.Spec.Replicas), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
		Age(rc.CreationTimestamp.Time, now), names, images,
		api.SelectorString(&api.LabelSelector{MatchLabels: rc.Spec.Selector}),
	}
}
