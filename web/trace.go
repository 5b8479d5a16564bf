package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// HTTPError is a non-200 answer of the trace source, passed on to the
// browser with its code and body (the API's Status JSON).
type HTTPError struct {
	Code int
	Body []byte
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("web: trace: HTTP %d: %s", e.Code, strings.TrimSpace(string(e.Body)))
}

// TracePath is the API path of a pod's trace.
func TracePath(namespace, pod string) string {
	return "/skiff/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(pod) + "/trace"
}

// TraceFromHandler is a TraceFunc that asks h, in process, for
// GET /skiff/v1/namespaces/{ns}/pods/{pod}/trace?url=URL with the
// session's token, and decodes the Trace. The server passes its own root
// handler, which serves that route.
func TraceFromHandler(h http.Handler) TraceFunc {
	return func(ctx context.Context, token, namespace, pod, target string) (*api.Trace, error) {
		u := "https://dashboard.invalid" + TracePath(namespace, pod) + "?url=" + url.QueryEscape(target)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("web: trace: %w", err)
		}
		req.RemoteAddr = "127.0.0.1:0"
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "application/json")
		bw := newBufferWriter()
		h.ServeHTTP(bw, req)
		if bw.code != 0 && bw.code != http.StatusOK {
			return nil, &HTTPError{Code: bw.code, Body: bw.body.Bytes()}
		}
		var t api.Trace
		if err := json.Unmarshal(bw.body.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("web: trace: decode: %w", err)
		}
		return &t, nil
	}
}

// serveTrace answers GET /ui/trace?namespace=&pod=&url= with the Trace.
func (d *Dashboard) serveTrace(w http.ResponseWriter, r *http.Request) {
	if d.cfg.Trace == nil {
		writeJSONError(w, http.StatusNotImplemented, "this server has no trace source")
		return
	}
	q := r.URL.Query()
	ns, pod, target := q.Get("namespace"), q.Get("pod"), q.Get("url")
	if ns == "" || pod == "" || target == "" {
		writeJSONError(w, http.StatusBadRequest, "namespace, pod and url are required")
		return
	}
	t, err := d.cfg.Trace(r.Context(), authedFrom(r.Context()).sess.Token, ns, pod, target)
	var he *HTTPError
	switch {
	case errors.As(err, &he):
		w.Header().Set("Content-Type", "application/json")
		if !json.Valid(he.Body) {
			writeJSONError(w, he.Code, strings.TrimSpace(string(he.Body)))
			return
		}
		w.WriteHeader(he.Code)
		w.Write(he.Body)
		return
	case err != nil:
		writeJSONError(w, http.StatusBadGateway, err.Error())
		return
	}
	if t.Kind == "" {
		t.Kind, t.APIVersion = "Trace", "skiff.dev/v1"
	}
	writeJSON(w, http.StatusOK, t)
}
