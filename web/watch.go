package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// watchedResources are the resources the dashboard keeps live, by the
// event name the browser sees (groupVersion, resource).
var watchedResources = [][3]string{
	{"namespaces", "v1", "namespaces"},
	{"nodes", "v1", "nodes"},
	{"pods", "v1", "pods"},
	{"services", "v1", "services"},
	{"endpointslices", "discovery.k8s.io/v1", "endpointslices"},
	{"deployments", "apps/v1", "deployments"},
	{"events", "v1", "events"},
	{"configmaps", "v1", "configmaps"},
	{"serviceaccounts", "v1", "serviceaccounts"},
	{"replicasets", "apps/v1", "replicasets"},
	{"daemonsets", "apps/v1", "daemonsets"},
	{"jobs", "batch/v1", "jobs"},
	{"cronjobs", "batch/v1", "cronjobs"},
	{"horizontalpodautoscalers", "autoscaling/v2", "horizontalpodautoscalers"},
	{"persistentvolumeclaims", "v1", "persistentvolumeclaims"},
	{"persistentvolumes", "v1", "persistentvolumes"},
	{"storageclasses", "storage.k8s.io/v1", "storageclasses"},
}

// watchQuery asks for the current state as ADDED events, a BOOKMARK
// marking its end, then changes.
const watchQuery = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"

// heartbeat keeps idle streams (and proxies in between) alive.
const heartbeat = 20 * time.Second

// sseOut serializes the writes of several watches into one event stream.
type sseOut struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (o *sseOut) send(event string, data []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b bytes.Buffer
	b.Grow(len(data) + len(event) + 16)
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteString("\ndata: ")
	b.Write(data) // one JSON line: never holds a newline
	b.WriteString("\n\n")
	_, err := o.w.Write(b.Bytes())
	return err
}

func (o *sseOut) comment(s string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.w.Write([]byte(": " + s + "\n\n")); err != nil {
		return err
	}
	return o.rc.Flush()
}

func (o *sseOut) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.rc.Flush()
}

// serveWatch is one Server-Sent Events stream carrying the API watches of
// every watched resource, each event named after its resource, with the
// API's own watch event ({"type": ..., "object": ...}) as data. It begins
// with a "reset" event; when any watch ends (the server stops, a watch
// times out) the whole stream ends, and the browser reconnects and
// starts over from the current state, so it cannot miss a change.
func (d *Dashboard) serveWatch(w http.ResponseWriter, r *http.Request) {
	a := authedFrom(r.Context())
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sseOut{w: w, rc: http.NewResponseController(w)}
	names := make([]string, 0, len(watchedResources))
	for _, res := range watchedResources {
		names = append(names, res[0])
	}
	hello, _ := json.Marshal(map[string]any{"resources": names})
	if _, err := w.Write([]byte("retry: 1500\n\n")); err != nil {
		return
	}
	if out.send("reset", hello) != nil {
		return
	}
	out.flush()

	var wg sync.WaitGroup
	for _, res := range watchedResources {
		info := api.Lookup(d.cfg.Resources, res[1], res[2])
		if info == nil {
			continue
		}
		path := "/api/v1/" + info.Resource
		if info.Group != "" {
			path = "/apis/" + info.Group + "/" + info.Version + "/" + info.Resource
		}
		wg.Add(1)
		go func(name, path string) {
			defer wg.Done()
			defer cancel() // one watch ends: the stream ends
			defer func() {
				// A handler aborting (http.ErrAbortHandler, as a proxy does when
				// the stream goes away) ends this watch, not the process.
				if v := recover(); v != nil && v != http.ErrAbortHandler {
					d.log.Error("dashboard: watch handler panicked", "resource", name, "panic", v)
				}
			}()
			lw := &lineWriter{name: name, out: out, hdr: http.Header{}}
			d.cfg.API.ServeHTTP(lw, apiRequest(ctx, r, http.MethodGet, path, watchQuery, a.sess.Token))
			lw.finish()
		}(res[0], path)
	}
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-t.C:
			if out.comment("ping") != nil {
				cancel()
			}
		}
	}
	wg.Wait()
}

// lineWriter is the ResponseWriter of one in-process API watch: each
// newline-terminated JSON event becomes one SSE event. A non-200 answer
// (a 403, a 410) becomes one "apierror" event when the watch ends.
type lineWriter struct {
	name string
	out  *sseOut
	hdr  http.Header
	code int
	buf  []byte
	err  error
}

type apiError struct {
	Resource string          `json:"resource"`
	Code     int             `json:"code"`
	Status   json.RawMessage `json:"status,omitempty"`
}

func (l *lineWriter) Header() http.Header { return l.hdr }

func (l *lineWriter) WriteHeader(code int) {
	if l.code == 0 {
		l.code = code
	}
}

func (l *lineWriter) Write(p []byte) (int, error) {
	if l.code == 0 {
		l.code = http.StatusOK
	}
	if l.err != nil {
		return 0, l.err
	}
	l.buf = append(l.buf, p...)
	if l.code != http.StatusOK {
		return len(p), nil
	}
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := l.buf[:i]
		if len(bytes.TrimSpace(line)) > 0 {
			if err := l.out.send(l.name, line); err != nil {
				l.err = err
				return 0, err
			}
		}
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

// Flush forwards the API's flushes to the browser.
func (l *lineWriter) Flush() { l.out.flush() }

func (l *lineWriter) finish() {
	if l.code == http.StatusOK || l.code == 0 || l.err != nil {
		return
	}
	e := apiError{Resource: l.name, Code: l.code}
	if json.Valid(l.buf) {
		e.Status = bytes.Clone(l.buf)
	}
	b, _ := json.Marshal(e)
	_ = l.out.send("apierror", b)
	l.out.flush()
}
