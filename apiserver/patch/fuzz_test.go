package patch

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzStrategicMerge checks that a strategic merge patch never panics on
// arbitrary input, that every error wraps one of the package's sentinels,
// that a success is a JSON object, and that applying the same patch twice
// changes nothing the second time.
func FuzzStrategicMerge(f *testing.F) {
	f.Add([]byte(deployment), []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr","image":"nginx:1.27"}]}}}}`))
	f.Add([]byte(deployment), []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`))
	f.Add([]byte(deployment), []byte(`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"sidecar"}],"containers":[{"name":"x"},{"$patch":"replace"}]}}}}`))
	f.Add([]byte(deployment), []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["a/one"],"finalizers":["z"],"labels":{"app":null}}}`))
	f.Add([]byte(`{"spec":{"ports":[{"port":80},{"port":443}]}}`), []byte(`{"spec":{"ports":[{"port":443,"targetPort":1},{"port":1}]}}`))
	f.Add([]byte(`{"spec":{"ports":"x"}}`), []byte(`{"spec":{"$retainKeys":["ports"],"ports":[{"port":1,"$patch":"delete"}]}}`))
	f.Add([]byte(`{}`), []byte(`{"$patch":"replace","a":[[{"$patch":"delete"}]]}`))
	f.Add([]byte(`[]`), []byte(`null`))
	f.Add([]byte(`{"a":1}`), []byte(`{`))

	f.Fuzz(func(t *testing.T, original, patch []byte) {
		out, err := Apply(StrategicMergePatch, original, patch)
		if err != nil {
			if !errors.Is(err, ErrInvalidPatch) && !errors.Is(err, ErrInvalidDocument) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		v, err := decodeJSON(out)
		if err != nil {
			t.Fatalf("result is not JSON: %v: %s", err, out)
		}
		if _, ok := v.(map[string]any); !ok {
			t.Fatalf("result is not an object: %s", out)
		}
		again, err := Apply(StrategicMergePatch, out, patch)
		if err != nil {
			t.Fatalf("second application failed: %v", err)
		}
		w, _ := decodeJSON(again)
		if !reflect.DeepEqual(normalizeNumbers(v), normalizeNumbers(w)) {
			t.Fatalf("patch is not idempotent:\noriginal %s\npatch    %s\nonce     %s\ntwice    %s", original, patch, out, again)
		}
	})
}
