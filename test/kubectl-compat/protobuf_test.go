package kubectlcompat

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"

	skiffpb "github.com/skiff-dev/skiff/apiserver/protobuf"
	"github.com/skiff-dev/skiff/test/kubectl-compat/internal/prototables"
)

// The checked-in tables are what the generator writes from this module's
// k8s.io/api (run `go generate ./apiserver/protobuf` after a bump).
func TestProtoTablesUpToDate(t *testing.T) {
	want, err := prototables.Generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../apiserver/protobuf/tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("apiserver/protobuf/tables.go is stale: run go generate ./apiserver/protobuf")
	}
}

// Every kind the tables cover, filled at random, marshalled by Kubernetes'
// own protobuf serializer and converted by skiffpb.ToJSON, decodes from
// that JSON to the object Kubernetes' protobuf decoder gives.
func TestProtobufRoundTrip(t *testing.T) {
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	f := randfill.New().NilChance(0.2).NumElements(0, 2).MaxDepth(12).
		Funcs(metafuzzer.Funcs(runtimeserializer.NewCodecFactory(scheme.Scheme))...)
	for _, r := range prototables.Roots {
		t.Run(r.Kind, func(t *testing.T) {
			typ := reflect.TypeOf(r.Value)
			gv := r.APIVersion
			if gv == "" {
				gv = "v1"
			}
			gvk := schema.FromAPIVersionAndKind(gv, r.Kind)
			for i := 0; i < 200; i++ {
				obj := reflect.New(typ).Interface().(runtime.Object)
				f.Fill(obj)
				obj.GetObjectKind().SetGroupVersionKind(gvk)
				var buf bytes.Buffer
				if err := ser.Encode(obj, &buf); err != nil {
					t.Fatal(err)
				}
				want := reflect.New(typ).Interface().(runtime.Object)
				if _, _, err := ser.Decode(buf.Bytes(), &gvk, want); err != nil {
					t.Fatal(err)
				}
				j, err := skiffpb.ToJSON(buf.Bytes(), true)
				if err != nil {
					t.Fatalf("ToJSON: %v", err)
				}
				got := reflect.New(typ).Interface().(runtime.Object)
				if err := json.Unmarshal(j, got); err != nil {
					t.Fatalf("decoding %s: %v", j, err)
				}
				want.GetObjectKind().SetGroupVersionKind(gvk)
				if !equality.Semantic.DeepEqual(got, want) {
					d := cmp.Diff(want, got)
					if len(d) > 3000 {
						d = d[:3000]
					}
					t.Fatalf("round trip differs (-k8s +skiff):\n%s", d)
				}
			}
		})
	}
}
