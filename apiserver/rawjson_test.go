package apiserver

import (
	"fmt"
	"testing"
	"unicode/utf8"

	sigsjson "sigs.k8s.io/json"
)

func TestScanMeta(t *testing.T) {
	cases := []struct {
		name, in string
		want     string
		fail     bool
	}{
		{"plain", `{"kind":"Pod","metadata":{"name":"a","namespace":"b","labels":{"x":"1","y":""}},"spec":{"s":[1,{"q":"}"}]}}`, "a b map[x:1 y:]", false},
		{"escapes", `{"metadata":{"name":"a\"b","labels":{"k\u0031":"v\n"}}}`, "a\"b  map[k1:v\n]", false},
		{"no metadata", `{"spec":{}}`, "  map[]", false},
		{"null labels", `{"metadata":{"labels":null,"name":null}}`, "  map[]", false},
		{"whitespace", " { \"metadata\" : { \"name\" : \"n\" } } ", "n  map[]", false},
		{"metadata after spec", `{"spec":{"metadata":{"name":"inner"}},"metadata":{"name":"outer"}}`, "outer  map[]", false},
		{"truncated", `{"metadata":{"name":"a"`, "", true},
		{"not object", `[1]`, "", true},
		{"label not string", `{"metadata":{"labels":{"a":1}}}`, "", true},
		{"garbage after value", `{"metadata":{"name":"a"}x}`, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m metaOnly
			err := scanMeta([]byte(tc.in), &m)
			if tc.fail {
				if err == nil {
					t.Fatalf("no error, got %+v", m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s %s %v", m.Metadata.Name, m.Metadata.Namespace, m.Metadata.Labels)
			if m.Metadata.Labels == nil {
				got = fmt.Sprintf("%s %s map[]", m.Metadata.Name, m.Metadata.Namespace)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzScanMeta: on valid JSON the scanner either fails (and the caller
// falls back) or agrees with a case-sensitive encoding/json decode.
func FuzzScanMeta(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","namespace":"b","labels":{"x":"1"}},"spec":{"a":[1,2,{"b":"]"}]}}`))
	f.Add([]byte(`{"metadata":{"name":"a\u00e9","labels":{"\u0078":"y"}}}`))
	f.Add([]byte(`{"metadata":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got metaOnly
		err := scanMeta(data, &got)
		if err != nil || !utf8.Valid(data) {
			return
		}
		var want metaOnly
		if sigsjson.UnmarshalCaseSensitivePreserveInts(data, &want) != nil {
			return // the scanner is more lenient about some invalid documents
		}
		if fmt.Sprint(got.Metadata.Name, got.Metadata.Namespace, len(got.Metadata.Labels)) !=
			fmt.Sprint(want.Metadata.Name, want.Metadata.Namespace, len(want.Metadata.Labels)) {
			t.Fatalf("scan %+v, decode %+v", got, want)
		}
		for k, v := range want.Metadata.Labels {
			if got.Metadata.Labels[k] != v {
				t.Fatalf("label %q: scan %q, decode %q", k, got.Metadata.Labels[k], v)
			}
		}
	})
}
