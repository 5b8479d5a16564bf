package patch

import "testing"

// TestMergePatch covers RFC 7386 Appendix A (the cases whose document and
// patch are objects; a patch that is not an object is rejected, see
// TestApplyCommonErrors) and the Kubernetes uses of a merge patch.
func TestMergePatch(t *testing.T) {
	tests := []struct {
		name     string
		original string
		patch    string
		want     string
	}{
		{name: "rfc replace value", original: `{"a":"b"}`, patch: `{"a":"c"}`, want: `{"a":"c"}`},
		{name: "rfc add key", original: `{"a":"b"}`, patch: `{"b":"c"}`, want: `{"a":"b","b":"c"}`},
		{name: "rfc delete only key", original: `{"a":"b"}`, patch: `{"a":null}`, want: `{}`},
		{name: "rfc delete one key", original: `{"a":"b","b":"c"}`, patch: `{"a":null}`, want: `{"b":"c"}`},
		{name: "rfc list replaced by string", original: `{"a":["b"]}`, patch: `{"a":"c"}`, want: `{"a":"c"}`},
		{name: "rfc string replaced by list", original: `{"a":"c"}`, patch: `{"a":["b"]}`, want: `{"a":["b"]}`},
		{name: "rfc nested merge and delete", original: `{"a":{"b":"c"}}`, patch: `{"a":{"b":"d","c":null}}`, want: `{"a":{"b":"d"}}`},
		{name: "rfc list of objects replaced", original: `{"a":[{"b":"c"}]}`, patch: `{"a":[1]}`, want: `{"a":[1]}`},
		{name: "rfc original null kept", original: `{"e":null}`, patch: `{"a":1}`, want: `{"e":null,"a":1}`},
		{name: "rfc nulls dropped from new object", original: `{}`, patch: `{"a":{"bb":{"ccc":null}}}`, want: `{"a":{"bb":{}}}`},
		{name: "labels: set one and delete one with null",
			original: `{"metadata":{"name":"web","labels":{"app":"web","tier":"frontend","old":"x"}}}`,
			patch:    `{"metadata":{"labels":{"tier":"backend","old":null,"new":"y"}}}`,
			want:     `{"metadata":{"name":"web","labels":{"app":"web","tier":"backend","new":"y"}}}`},
		{name: "containers list replaced, not merged",
			original: `{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr","image":"nginx"}]}}}}`,
			patch:    `{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr-2","image":"redis"}]}}}}`,
			want:     `{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr-2","image":"redis"}]}}}}`},
		{name: "nulls inside a replaced list are kept",
			original: `{"a":[]}`, patch: `{"a":[null,{"b":null}]}`, want: `{"a":[null,{"b":null}]}`},
		{name: "directives are plain keys", original: `{"a":{"b":1}}`, patch: `{"a":{"$patch":"delete"}}`,
			want: `{"a":{"b":1,"$patch":"delete"}}`},
		{name: "empty patch", original: `{"a":1}`, patch: `{}`, want: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(MergePatch, []byte(tt.original), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, got, tt.want)
		})
	}
}
