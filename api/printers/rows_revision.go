package printers

import (
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func controllerRevisionColumns() []Column {
	return []Column{
		nameColumn,
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		{Name: "Revision", Type: "integer", Description: "Revision indicates the revision of the state represented by Data."},
		ageColumn,
	}
}

// ControllerRevisionCells is a ControllerRevision's row: NAME CONTROLLER
// REVISION AGE, CONTROLLER being "<kind>.<group>/<name>" of its
// controller ("<none>" without one), as kubectl prints it.
func ControllerRevisionCells(r *api.ControllerRevision, now time.Time) []any {
	ctl := "<none>"
	if ref := api.ControllerRef(&r.ObjectMeta); ref != nil {
		group, _, _ := strings.Cut(ref.APIVersion, "/")
		if !strings.Contains(ref.APIVersion, "/") {
			group = ""
		}
		kind := strings.ToLower(ref.Kind)
		if group != "" {
			kind += "." + group
		}
		ctl = kind + "/" + ref.Name
	}
	return []any{r.Name, ctl, r.Revision, Age(r.CreationTimestamp.Time, now)}
}
