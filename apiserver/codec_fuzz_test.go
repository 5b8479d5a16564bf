package apiserver

import (
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary bodies, media types and validation modes to
// the request body decoder: it must never panic, and must either return an
// object of the right type or a 400/415 StatusError.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"a":"b"}},"spec":{"size":1,"items":[{"name":"x"}]}}`,
		`{"metadata":{"name":"w","name":"v"},"spec":{"foo":1}}`,
		`{"metadata":{"name":1}}`,
		`[]`, `null`, `{`, ``, `"x"`, `{"spec":{"items":[{"name":"a","value":1e400}]}}`,
		"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
		"a: &a [*a]\n", "metadata: {name: [1, {x: y}]}\n", "- 1\n- 2\n", "\t\x00",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), uint8(i))
	}
	media := []string{mediaJSON, mediaYAML, mediaProtobuf, "text/plain"}
	f.Fuzz(func(t *testing.T, body []byte, mtSel, fvSel uint8) {
		mt := media[int(mtSel)%len(media)]
		fv := fieldValidation(int(fvSel) % 3)
		obj, warnings, err := decodeObject(widgetInfo, mt, body, fv)
		if err != nil {
			var se *StatusError
			if !errors.As(err, &se) || (se.Code() != 400 && se.Code() != 415) {
				t.Fatalf("error %v is not a 400/415 StatusError", err)
			}
			if obj != nil {
				t.Fatal("object returned with an error")
			}
			return
		}
		w, ok := obj.(*widget)
		if !ok {
			t.Fatalf("decoded a %T", obj)
		}
		if w.APIVersion != "example.com/v1" || w.Kind != "Widget" {
			t.Fatalf("TypeMeta not filled: %+v", w.TypeMeta)
		}
		if fv != validationWarn && len(warnings) > 0 {
			t.Fatalf("warnings %v in mode %d", warnings, fv)
		}
	})
}
