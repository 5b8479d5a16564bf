package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// mustEqualJSON fails the test unless got and want decode to the same JSON
// value (object key order aside; list order counts).
func mustEqualJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	g, err := decodeJSON(got)
	if err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, got)
	}
	w, err := decodeJSON([]byte(want))
	if err != nil {
		t.Fatalf("bad want in test: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(normalizeNumbers(g), normalizeNumbers(w)) {
		t.Fatalf("result mismatch\n got: %s\nwant: %s", got, compact(t, want))
	}
}

// normalizeNumbers replaces json.Numbers by canonical strings so that 80 and
// 80.0 compare equal.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case json.Number:
		k, _ := primitiveKey(x)
		return k
	}
	return v
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("compact: %v", err)
	}
	return b.String()
}

// checkErr fails the test unless err matches want (nil meaning no error).
func checkErr(t *testing.T, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != nil && err == nil:
		t.Fatalf("got no error, want %v", want)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("got error %v, want one wrapping %v", err, want)
	}
}
