package apiserver

import (
	"encoding/json"
	"testing"
)

// TestWatchSendInitialEvents is client-go's watch-list: the current state,
// a BOOKMARK annotated k8s.io/initial-events-end at the list's revision,
// then changes.
func TestWatchSendInitialEvents(t *testing.T) {
	e := newEnv(t)
	e.createWidget("a", nil, nil)
	e.createWidget("b", nil, nil)
	w := e.watch(widgetsPath + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=1")
	for _, want := range []string{"a", "b"} {
		ev := w.next(false)
		if ev.Type != "ADDED" || ev.meta(t).Name != want {
			t.Fatalf("initial event %s %s, want ADDED %s", ev.Type, ev.meta(t).Name, want)
		}
	}
	ev := w.next(true)
	var bm struct {
		Kind     string
		Metadata struct {
			ResourceVersion string
			Annotations     map[string]string
		}
	}
	if err := json.Unmarshal(ev.Object, &bm); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "BOOKMARK" || bm.Kind != "Widget" || bm.Metadata.Annotations["k8s.io/initial-events-end"] != "true" || bm.Metadata.ResourceVersion == "" {
		t.Fatalf("after the initial events: %s %s", ev.Type, ev.Object)
	}
	e.createWidget("c", nil, nil)
	if ev := w.next(false); ev.Type != "ADDED" || ev.meta(t).Name != "c" {
		t.Fatalf("change event %s %s", ev.Type, ev.meta(t).Name)
	}

	r := e.do("GET", widgetsPath+"?watch=true&sendInitialEvents=true", nil)
	if r.code != 400 {
		t.Errorf("sendInitialEvents without resourceVersionMatch: code %d", r.code)
	}
}
