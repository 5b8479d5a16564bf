package netagent

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func TestVolumePayload(t *testing.T) {
	data := map[string][]byte{"a": []byte("1"), "b": []byte("2")}
	m := func(v int32) *int32 { return &v }
	cases := []struct {
		name     string
		items    []api.KeyToPath
		mode     *int32
		optional bool
		want     map[string]fs.FileMode // path -> mode
		wantErr  string
	}{
		{name: "every key with defaultMode", mode: m(0o440), want: map[string]fs.FileMode{"a": 0o440, "b": 0o440}},
		{name: "no defaultMode is 0644", want: map[string]fs.FileMode{"a": 0o644, "b": 0o644}},
		{name: "items with paths and a mode", mode: m(0o644),
			items: []api.KeyToPath{{Key: "a", Path: "conf/a.txt", Mode: m(0o600)}, {Key: "b", Path: "b"}},
			want:  map[string]fs.FileMode{"conf/a.txt": 0o600, "b": 0o644}},
		{name: "missing item key", items: []api.KeyToPath{{Key: "c", Path: "c"}}, wantErr: "configmap references non-existent config key: c"},
		{name: "missing item key optional", optional: true, items: []api.KeyToPath{{Key: "c", Path: "c"}, {Key: "a", Path: "x"}},
			want: map[string]fs.FileMode{"x": 0o644}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := volumePayload("configmap", data, tc.items, tc.mode, tc.optional)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for p, mode := range tc.want {
				if f, ok := got[p]; !ok || f.Mode != mode {
					t.Fatalf("%s: got %+v, want mode %v", p, got[p], mode)
				}
			}
		})
	}
	if _, err := volumePayload("secret", data, []api.KeyToPath{{Key: "z", Path: "z"}}, nil, false); err == nil || !strings.Contains(err.Error(), "secret references non-existent secret key: z") {
		t.Fatalf("secret: %v", err)
	}
}
