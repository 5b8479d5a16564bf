package patch

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestParseContentType(t *testing.T) {
	tests := []struct {
		name string
		ct   string
		want Type
		ok   bool
	}{
		{name: "merge", ct: "application/merge-patch+json", want: MergePatch, ok: true},
		{name: "json patch", ct: "application/json-patch+json", want: JSONPatch, ok: true},
		{name: "strategic", ct: "application/strategic-merge-patch+json", want: StrategicMergePatch, ok: true},
		{name: "charset parameter", ct: "application/merge-patch+json; charset=utf-8", want: MergePatch, ok: true},
		{name: "upper case and spaces", ct: "Application/Strategic-Merge-Patch+JSON ;charset=UTF-8", want: StrategicMergePatch, ok: true},
		{name: "plain json", ct: "application/json", ok: false},
		{name: "server-side apply", ct: "application/apply-patch+yaml", ok: false},
		{name: "empty", ct: "", ok: false},
		{name: "garbage", ct: ";;;", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseContentType(tt.ct)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("ParseContentType(%q) = %q, %v; want %q, %v", tt.ct, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestApplyCommonErrors(t *testing.T) {
	tests := []struct {
		name      string
		typ       Type
		original  string
		patch     string
		want      error
		wantCode  int
		wantInMsg string
	}{
		{name: "unsupported type", typ: "application/json", original: `{}`, patch: `{}`,
			want: ErrUnsupportedType, wantCode: http.StatusUnsupportedMediaType},
		{name: "original not JSON", typ: MergePatch, original: `{`, patch: `{}`,
			want: ErrInvalidDocument, wantCode: http.StatusInternalServerError},
		{name: "original a list", typ: StrategicMergePatch, original: `[]`, patch: `{}`,
			want: ErrInvalidDocument, wantCode: http.StatusInternalServerError},
		{name: "original a list, json patch", typ: JSONPatch, original: `[1]`, patch: `[]`,
			want: ErrInvalidDocument, wantCode: http.StatusInternalServerError},
		{name: "merge patch not JSON", typ: MergePatch, original: `{}`, patch: `{"a":`,
			want: ErrInvalidPatch, wantCode: http.StatusBadRequest},
		{name: "strategic patch empty", typ: StrategicMergePatch, original: `{}`, patch: ``,
			want: ErrInvalidPatch, wantCode: http.StatusBadRequest, wantInMsg: "empty body"},
		{name: "trailing data", typ: MergePatch, original: `{}`, patch: `{} {}`,
			want: ErrInvalidPatch, wantCode: http.StatusBadRequest, wantInMsg: "after the JSON value"},
		{name: "merge patch a list", typ: MergePatch, original: `{}`, patch: `["c"]`,
			want: ErrInvalidPatch, wantCode: http.StatusBadRequest, wantInMsg: "must be a JSON object"},
		{name: "strategic patch null", typ: StrategicMergePatch, original: `{}`, patch: `null`,
			want: ErrInvalidPatch, wantCode: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Apply(tt.typ, []byte(tt.original), []byte(tt.patch))
			checkErr(t, err, tt.want)
			if got := StatusCode(err); got != tt.wantCode {
				t.Errorf("StatusCode(%v) = %d, want %d", err, got, tt.wantCode)
			}
			if !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantInMsg)
			}
		})
	}
}

func TestStatusCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{name: "invalid patch", err: ErrInvalidPatch, want: 400},
		{name: "test failed", err: ErrTestFailed, want: 422},
		{name: "cannot apply", err: ErrCannotApply, want: 422},
		{name: "unsupported", err: ErrUnsupportedType, want: 415},
		{name: "invalid document", err: ErrInvalidDocument, want: 500},
		{name: "other", err: errors.New("boom"), want: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StatusCode(tt.err); got != tt.want {
				t.Fatalf("StatusCode = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestApplyDoesNotModifyInputs(t *testing.T) {
	original := []byte(`{"spec":{"containers":[{"name":"a","image":"x"}]},"metadata":{"labels":{"k":"v"}}}`)
	patch := []byte(`{"spec":{"containers":[{"name":"a","image":"y"},{"name":"b"}]},"metadata":{"labels":{"k":null}}}`)
	origCopy, patchCopy := string(original), string(patch)
	for _, typ := range []Type{MergePatch, StrategicMergePatch} {
		if _, err := Apply(typ, original, patch); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	if string(original) != origCopy || string(patch) != patchCopy {
		t.Fatal("Apply modified its input")
	}
}

func TestApplyKeepsLargeIntegersAndHTML(t *testing.T) {
	original := `{"metadata":{"annotations":{"a":"<b>&"}},"spec":{"big":9007199254740993}}`
	for _, typ := range []Type{MergePatch, StrategicMergePatch} {
		t.Run(string(typ), func(t *testing.T) {
			got, err := Apply(typ, []byte(original), []byte(`{"spec":{"other":1}}`))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(got), "9007199254740993") {
				t.Errorf("large integer lost: %s", got)
			}
			if !strings.Contains(string(got), `"<b>&"`) {
				t.Errorf("HTML characters escaped: %s", got)
			}
		})
	}
}
