package printers

import (
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- PodDisruptionBudgets ----

func podDisruptionBudgetColumns() []Column {
	return []Column{
		nameColumn,
		col("Min Available", "The minimum number or percentage of available pods this budget requires."),
		col("Max Unavailable", "The maximum number or percentage of unavailable pods this budget requires."),
		col("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time."),
		ageColumn,
	}
}

// PodDisruptionBudgetCells is a PodDisruptionBudget's row: NAME MIN
// AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE ("N/A" for the bound
// not set), as kubectl's printPodDisruptionBudget.
func PodDisruptionBudgetCells(p *api.PodDisruptionBudget, now time.Time) []any {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if p.Spec.MinAvailable != nil {
		minAvailable = p.Spec.MinAvailable.String()
	}
	if p.Spec.MaxUnavailable != nil {
		maxUnavailable = p.Spec.MaxUnavailable.String()
	}
	return []any{p.Name, minAvailable, maxUnavailable, int64(p.Status.DisruptionsAllowed), Age(p.CreationTimestamp.Time, now)}
}
