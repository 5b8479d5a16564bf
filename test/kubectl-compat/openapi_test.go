package kubectlcompat

import (
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kubectl/pkg/util/openapi"
)

// TestOpenAPIV2Protobuf reads /openapi/v2 the way client-go and kubectl's
// validation do: protobuf (gnostic), then kube-openapi's models.
func TestOpenAPIV2Protobuf(t *testing.T) {
	doc, err := env.cs.Discovery().OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	raw, err := env.cs.Discovery().RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := openapi_v2.ParseDocument(raw)
	if err != nil {
		t.Fatalf("gnostic parsing the JSON document: %v", err)
	}
	if len(doc.Definitions.AdditionalProperties) != len(fromJSON.Definitions.AdditionalProperties) ||
		len(doc.Paths.Path) != len(fromJSON.Paths.Path) {
		t.Errorf("protobuf has %d definitions and %d paths, JSON %d and %d", len(doc.Definitions.AdditionalProperties),
			len(doc.Paths.Path), len(fromJSON.Definitions.AdditionalProperties), len(fromJSON.Paths.Path))
	}
	resources, err := openapi.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("kubectl's openapi parser: %v", err)
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Service"}, {Version: "v1", Kind: "Pod"}, {Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}, {Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"},
	} {
		if resources.LookupResource(gvk) == nil {
			t.Errorf("no model for %v", gvk)
		}
	}
	svc := resources.LookupResource(schema.GroupVersionKind{Version: "v1", Kind: "Service"}).(*proto.Kind)
	spec := svc.Fields["spec"].(proto.Reference).SubSchema().(*proto.Kind)
	ports := spec.Fields["ports"].(*proto.Array)
	if ports.GetExtensions()["x-kubernetes-patch-merge-key"] != "port" {
		t.Errorf("spec.ports extensions %v", ports.GetExtensions())
	}
	port := ports.SubType.(proto.Reference).SubSchema().(*proto.Kind)
	if !port.IsRequired("port") || port.Fields["targetPort"] == nil {
		t.Errorf("ServicePort model %v", port)
	}
}
