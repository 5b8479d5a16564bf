package apiserver

import (
	"net/http"
	"testing"
	"time"
)

// CloseWatches ends open watch streams (a graceful shutdown is not held up
// by them) and refuses new ones with 503.
func TestCloseWatches(t *testing.T) {
	e := newEnv(t)
	w := e.watch(widgetsPath + "?watch=true")
	e.s.CloseWatches()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-w.events:
			if !ok {
				goto ended
			}
		case <-deadline:
			t.Fatal("the watch stream did not end after CloseWatches")
		}
	}
ended:
	if r := e.do("GET", widgetsPath+"?watch=true", nil); r.code != http.StatusServiceUnavailable {
		t.Fatalf("new watch after CloseWatches: %d %s", r.code, r.body)
	}
	e.s.CloseWatches() // a second call is harmless
	if r := e.do("GET", widgetsPath, nil); r.code != http.StatusOK {
		t.Fatalf("plain list after CloseWatches: %d %s", r.code, r.body)
	}
}
