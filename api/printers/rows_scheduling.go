package printers

import (
	"time"

	"github.com/skiff-dev/skiff/api"
)

func priorityClassColumns() []Column {
	return []Column{
		nameColumn,
		{Name: "Value", Type: "integer", Description: "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec."},
		{Name: "Global-Default", Type: "boolean", Description: "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority."},
		ageColumn,
		col("PreemptionPolicy", "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."),
	}
}

// PriorityClassCells is a PriorityClass's row: NAME VALUE GLOBAL-DEFAULT
// AGE PREEMPTIONPOLICY.
func PriorityClassCells(pc *api.PriorityClass, now time.Time) []any {
	policy := ""
	if pc.PreemptionPolicy != nil {
		policy = string(*pc.PreemptionPolicy)
	}
	return []any{pc.Name, int64(pc.Value), pc.GlobalDefault, Age(pc.CreationTimestamp.Time, now), policy}
}
