package threeway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/apiserver/patch"
)

func mustDecode(t *testing.T, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	m, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// apply runs the server's strategic merge on current with p.
func apply(t *testing.T, current map[string]any, p map[string]any) string {
	t.Helper()
	out, err := patch.Apply(patch.StrategicMergePatch, []byte(canonical(t, current)), []byte(canonical(t, p)))
	if err != nil {
		t.Fatalf("server strategic merge of %s: %v", canonical(t, p), err)
	}
	m := mustDecode(t, string(out))
	return canonical(t, m)
}

const deploy = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
 "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
 "spec":{"containers":[{"name":"web","image":"nginx:1","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
 "ports":[{"containerPort":80}]}]}}}}`

// live is deploy as the server stores it: defaults and status added.
const live = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"7","generation":1},
 "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"revisionHistoryLimit":10,"template":{"metadata":{"labels":{"app":"web"}},
 "spec":{"restartPolicy":"Always","containers":[{"name":"web","image":"nginx:1","imagePullPolicy":"IfNotPresent",
 "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
 "ports":[{"containerPort":80,"protocol":"TCP"}]}]}}},"status":{"replicas":2}}`

func TestThreeWay(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		original, modified, current string
		wantPatch                   string
		wantResult                  string // "" skips the check
	}{
		{
			name:     "unchanged despite server defaults and status",
			original: deploy, modified: deploy, current: live,
			wantPatch: `{}`,
		},
		{
			name:     "scalar change",
			original: deploy, current: live,
			modified:  replace(deploy, `"replicas":2`, `"replicas":5`),
			wantPatch: `{"spec":{"replicas":5}}`,
		},
		{
			name:     "container image change merges by name, keeps defaults",
			original: deploy, current: live,
			modified:   replace(deploy, `nginx:1`, `nginx:2`),
			wantPatch:  `{"spec":{"template":{"spec":{"containers":[{"image":"nginx:2","name":"web"}]}}}}`,
			wantResult: replace(live, `nginx:1`, `nginx:2`),
		},
		{
			name:     "env var removed from the config is deleted",
			original: deploy, current: live,
			modified:   replace(deploy, `,{"name":"B","value":"2"}`, ``),
			wantPatch:  `{"spec":{"template":{"spec":{"containers":[{"env":[{"$patch":"delete","name":"B"}],"name":"web"}]}}}}`,
			wantResult: replace(live, `,{"name":"B","value":"2"}`, ``),
		},
		{
			name:     "field removed from the config is nulled",
			original: replace(deploy, `"replicas":2,`, `"replicas":2,"minReadySeconds":5,`),
			current:  replace(live, `"replicas":2,`, `"replicas":2,"minReadySeconds":5,`),
			modified: deploy, wantPatch: `{"spec":{"minReadySeconds":null}}`,
			wantResult: live,
		},
		{
			name:     "field set by someone else and not in either config is kept",
			original: deploy, modified: deploy,
			current:   replace(live, `"replicas":2,`, `"replicas":2,"paused":true,`),
			wantPatch: `{}`,
		},
		{
			name:     "no last-applied: only changes, no deletions",
			original: "", current: replace(live, `"replicas":2,`, `"replicas":2,"minReadySeconds":5,`),
			modified:  replace(deploy, `"replicas":2`, `"replicas":3`),
			wantPatch: `{"spec":{"replicas":3}}`,
		},
		{
			name:     "change and deletion in the same container merge into one element",
			original: deploy, current: live,
			modified:   replace(replace(deploy, `,{"name":"B","value":"2"}`, ``), `nginx:1`, `nginx:3`),
			wantPatch:  `{"spec":{"template":{"spec":{"containers":[{"env":[{"$patch":"delete","name":"B"}],"image":"nginx:3","name":"web"}]}}}}`,
			wantResult: replace(replace(live, `,{"name":"B","value":"2"}`, ``), `nginx:1`, `nginx:3`),
		},
		{
			name:       "service port added and removed by port",
			original:   `{"spec":{"ports":[{"port":80},{"port":81}]}}`,
			modified:   `{"spec":{"ports":[{"port":80},{"port":82}]}}`,
			current:    `{"spec":{"ports":[{"port":80,"protocol":"TCP"},{"port":81,"protocol":"TCP"}]}}`,
			wantPatch:  `{"spec":{"ports":[{"$patch":"delete","port":81},{"port":82}]}}`,
			wantResult: `{"spec":{"ports":[{"port":80,"protocol":"TCP"},{"port":82}]}}`,
		},
		{
			name:       "atomic list replaced when it differs from live",
			original:   `{"spec":{"template":{"spec":{"containers":[{"name":"a","args":["x","y"]}]}}}}`,
			modified:   `{"spec":{"template":{"spec":{"containers":[{"name":"a","args":["x"]}]}}}}`,
			current:    `{"spec":{"template":{"spec":{"containers":[{"name":"a","args":["x","y"]}]}}}}`,
			wantPatch:  `{"spec":{"template":{"spec":{"containers":[{"args":["x"],"name":"a"}]}}}}`,
			wantResult: `{"spec":{"template":{"spec":{"containers":[{"args":["x"],"name":"a"}]}}}}`,
		},
		{
			name:       "set list: additions and deletions",
			original:   `{"metadata":{"finalizers":["a","b"]}}`,
			modified:   `{"metadata":{"finalizers":["a","c"]}}`,
			current:    `{"metadata":{"finalizers":["a","b","z"]}}`,
			wantPatch:  `{"metadata":{"$deleteFromPrimitiveList/finalizers":["b"],"finalizers":["c"]}}`,
			wantResult: `{"metadata":{"finalizers":["a","z","c"]}}`,
		},
		{
			name:       "label removed",
			original:   `{"metadata":{"labels":{"a":"1","b":"2"}}}`,
			modified:   `{"metadata":{"labels":{"a":"1"}}}`,
			current:    `{"metadata":{"labels":{"a":"1","b":"2","c":"3"}}}`,
			wantPatch:  `{"metadata":{"labels":{"b":null}}}`,
			wantResult: `{"metadata":{"labels":{"a":"1","c":"3"}}}`,
		},
		{
			name:      "type change replaces",
			original:  `{"spec":{"x":{"a":1}}}`,
			modified:  `{"spec":{"x":"s"}}`,
			current:   `{"spec":{"x":{"a":1}}}`,
			wantPatch: `{"spec":{"x":"s"}}`,
		},
		{
			name:      "big integers compare exactly",
			original:  `{"spec":{"n":9007199254740993}}`,
			modified:  `{"spec":{"n":9007199254740993}}`,
			current:   `{"spec":{"n":9007199254740993}}`,
			wantPatch: `{}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, m, c := mustDecode(t, tc.original), mustDecode(t, tc.modified), mustDecode(t, tc.current)
			before := canonical(t, []any{o, m, c})
			p := ThreeWay(o, m, c)
			if got := canonical(t, p); got != tc.wantPatch {
				t.Errorf("patch = %s\nwant    %s", got, tc.wantPatch)
			}
			if canonical(t, []any{o, m, c}) != before {
				t.Error("ThreeWay modified its arguments")
			}
			if tc.wantResult != "" {
				if got, want := apply(t, c, p), canonical(t, mustDecode(t, tc.wantResult)); got != want {
					t.Errorf("server result = %s\nwant           %s", got, want)
				}
			}
		})
	}
}

func TestTwoWay(t *testing.T) {
	o := mustDecode(t, live)
	m := mustDecode(t, replace(replace(live, `"replicas":2,"selector"`, `"replicas":4,"selector"`), `{"name":"A","value":"1"},`, ``))
	p := TwoWay(o, m)
	want := `{"spec":{"replicas":4,"template":{"spec":{"containers":[{"env":[{"$patch":"delete","name":"A"}],"name":"web"}]}}}}`
	if got := canonical(t, p); got != want {
		t.Fatalf("patch = %s\nwant    %s", got, want)
	}
	if got := apply(t, o, p); got != canonical(t, m) {
		t.Fatalf("result = %s\nwant     %s", got, canonical(t, m))
	}
	if len(TwoWay(o, o)) != 0 {
		t.Fatal("TwoWay of equal objects is not empty")
	}
}

func TestStripNulls(t *testing.T) {
	in := mustDecode(t, `{"metadata":{"creationTimestamp":null,"name":"x"},"spec":{"a":[null,{"b":null}]}}`)
	if got := canonical(t, StripNulls(in)); got != `{"metadata":{"name":"x"},"spec":{"a":[null,{}]}}` {
		t.Fatalf("StripNulls = %s", got)
	}
	if _, ok := in["metadata"].(map[string]any)["creationTimestamp"]; !ok {
		t.Fatal("StripNulls modified its argument")
	}
}

func replace(s, old, new string) string { return strings.ReplaceAll(s, old, new) }
