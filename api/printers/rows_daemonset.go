package printers

import (
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- DaemonSets ----

func daemonSetColumns() []Column {
	return []Column{
		nameColumn,
		col("Desired", "DesiredNumberScheduled is the total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"),
		col("Current", "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"),
		col("Ready", "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."),
		col("Up-to-date", "The total number of nodes that are running updated daemon pod"),
		col("Available", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
		col("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"),
		ageColumn,
		wide(col("Containers", descContainers)),
		wide(col("Images", descImages)),
		wide(col("Selector", "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors")),
	}
}

// DaemonSetCells is a DaemonSet's row: NAME DESIRED CURRENT READY
// UP-TO-DATE AVAILABLE NODE SELECTOR AGE, then (wide) CONTAINERS IMAGES
// SELECTOR, as kubectl's printDaemonSet.
func DaemonSetCells(d *api.DaemonSet, now time.Time) []any {
	names, images := ContainerCells(d.Spec.Template.Spec.Containers)
	st := d.Status
	return []any{
		d.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), FormatLabels(d.Spec.Template.Spec.NodeSelector),
		Age(d.CreationTimestamp.Time, now), names, images, api.SelectorString(d.Spec.Selector),
	}
}
