package web

import (
	"bytes"
	"context"
	"net/http"
	"strings"
)

// apiRequest is r re-aimed at the API handler: path, the session's token
// as the bearer token, and no cookies (the API never sees them).
func apiRequest(ctx context.Context, r *http.Request, method, path, rawQuery, token string) *http.Request {
	r2 := r.Clone(ctx)
	r2.Method = method
	r2.URL.Path = path
	r2.URL.RawPath = ""
	r2.URL.RawQuery = rawQuery
	r2.RequestURI = ""
	r2.Header.Del("Cookie")
	r2.Header.Del(CSRFHeader)
	r2.Header.Set("Authorization", "Bearer "+token)
	return r2
}

// proxyAllowed are the API paths the browser may reach through
// /ui/proxy: the resource API, and the health/version endpoints.
func proxyAllowed(method, path string) bool {
	if strings.Contains(path, "..") || strings.Contains(path, "//") {
		return false
	}
	switch {
	case strings.HasPrefix(path, "/api/"), strings.HasPrefix(path, "/apis/"):
		return true
	case path == "/readyz" || path == "/healthz" || path == "/version":
		return method == http.MethodGet
	}
	return false
}

// serveProxy forwards /ui/proxy/<path> to the API handler as <path>, with
// the session's token. withSession has already checked the CSRF token of
// a write; the API's authorizer refuses a read-only token's writes.
func (d *Dashboard) serveProxy(w http.ResponseWriter, r *http.Request) {
	a := authedFrom(r.Context())
	p := strings.TrimPrefix(r.URL.Path, "/ui/proxy")
	if r.Header.Get("Upgrade") != "" {
		// WebSockets go through /ui/exec, which checks their Origin.
		writeJSONError(w, http.StatusBadRequest, "no upgrades through /ui/proxy (the terminal is /ui/exec)")
		return
	}
	if !proxyAllowed(r.Method, p) {
		writeJSONError(w, http.StatusNotFound, "not an API path")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	d.cfg.API.ServeHTTP(w, apiRequest(r.Context(), r, r.Method, p, r.URL.RawQuery, a.sess.Token))
}

// bufferWriter is an in-process ResponseWriter that keeps the response.
type bufferWriter struct {
	hdr  http.Header
	code int
	body bytes.Buffer
}

func newBufferWriter() *bufferWriter { return &bufferWriter{hdr: http.Header{}} }

func (b *bufferWriter) Header() http.Header { return b.hdr }
func (b *bufferWriter) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}
func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.code == 0 {
		b.code = http.StatusOK
	}
	return b.body.Write(p)
}

// callAPI runs one request against the API handler in process.
func (d *Dashboard) callAPI(ctx context.Context, r *http.Request, method, path, query, token, contentType string, body []byte) *bufferWriter {
	req := apiRequest(ctx, r, method, path, query, token)
	req.Body = http.NoBody
	req.ContentLength = int64(len(body))
	if body != nil {
		req.Body = readCloser{bytes.NewReader(body)}
		req.GetBody = nil
	}
	req.Header.Del("Content-Length")
	req.Header.Del("Accept-Encoding")
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	bw := newBufferWriter()
	d.cfg.API.ServeHTTP(bw, req)
	if bw.code == 0 {
		bw.code = http.StatusOK
	}
	return bw
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
