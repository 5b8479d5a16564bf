package apiserver

import (
	"net/http"

	"github.com/skiff-dev/skiff/api/field"
)

// dryRunAll is the one dryRun value Kubernetes accepts: every stage of the
// write runs and nothing is stored.
const dryRunAll = "All"

// optionsKind is the meta/v1 options kind a write verb's query parameters
// decode into, the kind a bad dryRun is reported against.
var optionsKind = map[string]string{
	"create":           "CreateOptions",
	"update":           "UpdateOptions",
	"patch":            "PatchOptions",
	"delete":           "DeleteOptions",
	"deletecollection": "DeleteOptions",
}

// checkDryRun rejects a write whose dryRun query parameter holds anything
// but "All" (dryRun=true, dryRun=server, dryRun=), as the Kubernetes API
// does: 422 Invalid on the verb's options kind
// (`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value:
// ...`), before anything is read or written. Without the check an unknown
// value would be a real write. Reads pass unchecked.
func checkDryRun(r *http.Request, verb string) error {
	kind, ok := optionsKind[verb]
	if !ok {
		return nil
	}
	return validateDryRun(kind, r.URL.Query()["dryRun"])
}

// validateDryRun is the check on one options kind's dryRun values (the
// query's, or a DeleteOptions body's).
func validateDryRun(kind string, values []string) error {
	for _, v := range values {
		if v != dryRunAll {
			return NewInvalid(kind+".meta.k8s.io", "", field.ErrorList{
				field.NotSupported(field.NewPath("dryRun"), values, []string{dryRunAll}),
			})
		}
	}
	return nil
}
