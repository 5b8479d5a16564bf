package server

import (
	"net/http"
	"strconv"

	"github.com/skiff-dev/skiff/store"
)

// pathCRDs is the collection kubectl lists before it validates an object
// of a kind its OpenAPI document lacks.
const pathCRDs = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// crdList answers GET pathCRDs with an empty CustomResourceDefinitionList:
// Skiff serves no CustomResourceDefinitions, so there are none, which is
// what kube-apiserver answers a cluster that has none.
//
// Why it is served although the group is not in discovery: kubectl's
// field validation (k8s.io/cli-runtime resource.QueryParamVerifier), for
// a kind the OpenAPI document lacks, lists this collection to tell a
// custom resource from an unknown kind. A 404 there is "failed to check
// CRD" and aborts the whole `kubectl apply -k` of a kustomization (one
// document set), losing every object after the unserved one. An empty
// list lets kubectl skip client-side validation of that kind, as it does
// on any cluster, and the object alone is refused ("no matches for kind",
// or the server's own answer) while the others apply. `kubectl get crd`
// still answers that the server has no such resource type: discovery does
// not list the group, since nothing can be created in it.
func crdList(st store.Interface) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rv, err := st.Revision(r.Context())
		if err != nil {
			http.Error(w, "cannot read the store's revision", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"CustomResourceDefinitionList","apiVersion":"apiextensions.k8s.io/v1","metadata":{"resourceVersion":"` +
			strconv.FormatInt(rv, 10) + `"},"items":[]}` + "\n"))
	})
}
