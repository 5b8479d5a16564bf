package patch

import "testing"

func TestJSONPatch(t *testing.T) {
	const deploy = `{"metadata":{"name":"web","labels":{"app":"web"}},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}}}}`
	tests := []struct {
		name     string
		original string
		patch    string
		want     string
		wantErr  error
	}{
		{name: "add a label",
			original: deploy,
			patch:    `[{"op":"add","path":"/metadata/labels/tier","value":"frontend"}]`,
			want:     `{"metadata":{"name":"web","labels":{"app":"web","tier":"frontend"}},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}}}}`},
		{name: "add a label with an escaped key",
			original: `{"metadata":{"labels":{}}}`,
			patch:    `[{"op":"add","path":"/metadata/labels/app.kubernetes.io~1name","value":"web"}]`,
			want:     `{"metadata":{"labels":{"app.kubernetes.io/name":"web"}}}`},
		{name: "append a container",
			original: deploy,
			patch:    `[{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"side","image":"busybox"}}]`,
			want:     `{"metadata":{"name":"web","labels":{"app":"web"}},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.25"},{"name":"side","image":"busybox"}]}}}}`},
		{name: "remove a label",
			original: deploy,
			patch:    `[{"op":"remove","path":"/metadata/labels/app"}]`,
			want:     `{"metadata":{"name":"web","labels":{}},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}}}}`},
		{name: "test then replace the image",
			original: deploy,
			patch: `[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"web"},
			         {"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.26"},
			         {"op":"replace","path":"/spec/replicas","value":3}]`,
			want: `{"metadata":{"name":"web","labels":{"app":"web"}},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}`},
		{name: "move and copy",
			original: `{"a":{"x":1},"b":{}}`,
			patch:    `[{"op":"move","from":"/a/x","path":"/b/y"},{"op":"copy","from":"/b","path":"/c"}]`,
			want:     `{"a":{},"b":{"y":1},"c":{"y":1}}`},
		{name: "empty patch", original: deploy, patch: `[]`, want: deploy},
		{name: "test fails",
			original: deploy,
			patch:    `[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":3}]`,
			wantErr:  ErrTestFailed},
		{name: "test of a missing path fails",
			original: deploy,
			patch:    `[{"op":"test","path":"/metadata/labels/nope","value":"x"}]`,
			wantErr:  ErrTestFailed},
		{name: "remove a missing path",
			original: deploy,
			patch:    `[{"op":"remove","path":"/metadata/annotations/x"}]`,
			wantErr:  ErrCannotApply},
		{name: "replace a missing key",
			original: deploy,
			patch:    `[{"op":"replace","path":"/spec/paused","value":true}]`,
			wantErr:  ErrCannotApply},
		{name: "index out of range",
			original: deploy,
			patch:    `[{"op":"add","path":"/spec/template/spec/containers/5","value":{}}]`,
			wantErr:  ErrCannotApply},
		{name: "replace the whole document by a string",
			original: deploy,
			patch:    `[{"op":"replace","path":"","value":"x"}]`,
			wantErr:  ErrCannotApply},
		{name: "not JSON", original: deploy, patch: `[{"op":`, wantErr: ErrInvalidPatch},
		{name: "an object instead of a list", original: deploy, patch: `{"op":"add"}`, wantErr: ErrInvalidPatch},
		{name: "unknown op", original: deploy, patch: `[{"op":"frobnicate","path":"/a"}]`, wantErr: ErrInvalidPatch},
		{name: "missing path", original: deploy, patch: `[{"op":"remove"}]`, wantErr: ErrInvalidPatch},
		{name: "add without value", original: deploy, patch: `[{"op":"add","path":"/a"}]`, wantErr: ErrInvalidPatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(JSONPatch, []byte(tt.original), []byte(tt.patch))
			checkErr(t, err, tt.wantErr)
			if tt.wantErr == nil {
				mustEqualJSON(t, got, tt.want)
			}
		})
	}
}

func TestJSONPatchTooManyOperations(t *testing.T) {
	ops := make([]byte, 0, 64*(maxJSONPatchOperations+1))
	ops = append(ops, '[')
	for i := 0; i <= maxJSONPatchOperations; i++ {
		if i > 0 {
			ops = append(ops, ',')
		}
		ops = append(ops, `{"op":"test","path":"/a","value":1}`...)
	}
	ops = append(ops, ']')
	_, err := Apply(JSONPatch, []byte(`{"a":1}`), ops)
	checkErr(t, err, ErrInvalidPatch)
}
