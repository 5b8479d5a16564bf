package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// loadManifests reads testdata/*.yaml and returns each document as JSON
// (what kubectl sends), named by file, index and kind.
func loadManifests(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	sep := regexp.MustCompile(`(?m)^---\s*$`)
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range sep.Split(string(b), -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s[%d]: %v", f, i, err)
			}
			var tm TypeMeta
			if err := json.Unmarshal(j, &tm); err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(f)+"/"+string(rune('0'+i))+"-"+tm.Kind] = j
		}
	}
	return out
}

// TestManifestsDecodeStrictly decodes real Kubernetes manifests and API
// responses with the strict decoder Skiff's API server uses: an unknown,
// misspelt or duplicated field fails, so every field name here matches
// Kubernetes'. Each object then round-trips, defaults and validates.
func TestManifestsDecodeStrictly(t *testing.T) {
	res := Resources()
	kinds := map[string]bool{}
	for name, j := range loadManifests(t) {
		t.Run(name, func(t *testing.T) {
			var tm TypeMeta
			if err := json.Unmarshal(j, &tm); err != nil {
				t.Fatal(err)
			}
			info := LookupKind(res, tm.APIVersion, tm.Kind)
			if info == nil {
				t.Fatalf("no resource for %s %s", tm.APIVersion, tm.Kind)
			}
			kinds[tm.Kind] = true
			obj := info.New()
			strictErrs, err := kjson.UnmarshalStrict(j, obj)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(strictErrs) > 0 {
				t.Fatalf("strict decoding errors: %v", strictErrs)
			}

			// Round trip: what Skiff writes decodes strictly to the same object.
			b1, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			again := info.New()
			if strictErrs, err := kjson.UnmarshalStrict(b1, again); err != nil || len(strictErrs) > 0 {
				t.Fatalf("re-decode: %v %v\n%s", err, strictErrs, b1)
			}
			if b2, _ := json.Marshal(again); string(b2) != string(b1) {
				t.Fatalf("round trip changed the object:\n%s\n%s", b1, b2)
			}

			info.Default(obj)
			if errs := info.ValidateCreate(obj); len(errs) > 0 {
				t.Fatalf("validation: %v", errs)
			}
			if errs := info.ValidateUpdate(obj, obj); len(errs) > 0 {
				t.Fatalf("update validation against itself: %v", errs)
			}
		})
	}
	for _, k := range []string{"Deployment", "StatefulSet", "Pod", "Service", "EndpointSlice", "Node", "Namespace", "Event", "Lease", "ServiceCIDR", "IPAddress"} {
		if !kinds[k] {
			t.Errorf("no manifest of kind %s", k)
		}
	}
}

// TestStrictDecodingRejectsUnknownFields shows the point of the test above:
// a field Skiff does not know is reported with its path.
func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	tests := []struct {
		name string
		in   string
		obj  any
		want string
	}{
		{"misspelt port field", `{"spec":{"ports":[{"port":80,"targetport":8080}]}}`, &Service{}, `spec.ports[0].targetport`},
		{"unknown pod field", `{"spec":{"containers":[],"affinty":{}}}`, &Pod{}, `spec.affinty`},
		{"duplicate field", `{"spec":{"replicas":1,"replicas":2}}`, &Deployment{}, `spec.replicas`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			strictErrs, err := kjson.UnmarshalStrict([]byte(tt.in), tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if len(strictErrs) != 1 || !strings.Contains(strictErrs[0].Error(), tt.want) {
				t.Fatalf("strict errors = %v, want one naming %s", strictErrs, tt.want)
			}
		})
	}
}

// TestKubectlShapes checks details of the JSON Skiff writes that kubectl
// and client-go rely on.
func TestKubectlShapes(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"empty pod condition times are null", PodCondition{Type: PodReady, Status: ConditionTrue},
			`{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":null}`},
		{"endpoint conditions are pointers", EndpointConditions{Ready: ptrTo(false)}, `{"ready":false}`},
		{"defaulted endpoint port name is an empty string", func() EndpointSlice {
			s := EndpointSlice{AddressType: AddressTypeIPv4, Ports: []EndpointPort{{Port: ptrTo[int32](80)}}}
			DefaultEndpointSlice(&s)
			return s
		}(), `{"metadata":{"creationTimestamp":null},"addressType":"IPv4","endpoints":null,"ports":[{"name":"","protocol":"TCP","port":80}]}`},
		{"event reporting fields always present", Event{}, `{"metadata":{"creationTimestamp":null},"involvedObject":{},"source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":null,"reportingComponent":"","reportingInstance":""}`},
		{"micro time", MicroTime{mustTime(t, "2025-03-01T10:00:00.1234567Z")}, `"2025-03-01T10:00:00.123456Z"`},
		{"watch event", WatchEvent{Type: WatchAdded, Object: json.RawMessage(`{"kind":"Pod"}`)}, `{"type":"ADDED","object":{"kind":"Pod"}}`},
		{"scale", Scale{TypeMeta: TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"}, Spec: ScaleSpec{Replicas: 3}, Status: ScaleStatus{Replicas: 2, Selector: "app=web"}},
			`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"creationTimestamp":null},"spec":{"replicas":3},"status":{"replicas":2,"selector":"app=web"}}`},
		{"delete options", DeleteOptions{PropagationPolicy: ptrTo(DeletePropagationForeground), GracePeriodSeconds: ptrTo[int64](0), Preconditions: &Preconditions{UID: ptrTo("u")}},
			`{"gracePeriodSeconds":0,"preconditions":{"uid":"u"},"propagationPolicy":"Foreground"}`},
		{"binding", Binding{Target: ObjectReference{Kind: "Node", Name: "node-1"}}, `{"metadata":{"creationTimestamp":null},"target":{"kind":"Node","name":"node-1"}}`},
		{"list items never omitted", ServiceList{}, `{"metadata":{},"items":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustJSON(t, tt.v); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
