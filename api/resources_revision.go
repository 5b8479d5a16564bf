package api

import (
	"bytes"
	"encoding/json"

	"github.com/skiff-dev/skiff/api/field"
)

func controllerRevisions() *ResourceInfo {
	return build[ControllerRevision, *ControllerRevision, ControllerRevisionList](ResourceInfo{
		Group: "apps", Version: "v1", Resource: "controllerrevisions", Singular: "controllerrevision", Kind: "ControllerRevision", ListKind: "ControllerRevisionList",
		Namespaced: true,
	}, kindFuncs[*ControllerRevision]{
		create: ValidateControllerRevision,
		update: ValidateControllerRevisionUpdate,
	})
}

// ValidateControllerRevision is upstream's: a DNS subdomain name, a
// revision ≥ 0, and data (when given) a JSON object.
func ValidateControllerRevision(r *ControllerRevision) field.ErrorList {
	errs := ValidateObjectMeta(&r.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	if r.Revision < 0 {
		errs = append(errs, field.Invalid(field.NewPath("revision"), r.Revision, "must be greater than or equal to 0"))
	}
	if len(r.Data) > 0 {
		var m map[string]any
		if err := json.Unmarshal(r.Data, &m); err != nil || m == nil {
			errs = append(errs, field.Invalid(field.NewPath("data"), string(r.Data), "must be a JSON object"))
		}
	}
	return errs
}

// ValidateControllerRevisionUpdate: data is immutable; the revision
// number may change (a rollback renumbers the revision it returns to).
func ValidateControllerRevisionUpdate(r, old *ControllerRevision) field.ErrorList {
	errs := ValidateControllerRevision(r)
	if !JSONEqual(r.Data, old.Data) {
		errs = append(errs, field.Invalid(field.NewPath("data"), "", "field is immutable"))
	}
	return errs
}

// JSONEqual compares two JSON documents by value (key order and spacing
// aside).
func JSONEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
