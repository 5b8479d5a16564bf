// Package nodeapitest is a node agent's /metrics/resource for tests: an
// HTTPS server that answers only the server's node API client
// certificate (netagent.NodeAPIClientName), as an agent does, with the
// Prometheus text a test builds, and the helpers that write it. A node
// publishes it with Annotations.
package nodeapitest

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent"
)

// Start serves body(r, now) as GET /metrics/resource until the test ends.
func Start(tb testing.TB, body func(r *http.Request, now time.Time) (string, error)) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics/resource" || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 ||
			r.TLS.PeerCertificates[0].Subject.CommonName != netagent.NodeAPIClientName {
			http.NotFound(w, r)
			return
		}
		b, err := body(r, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(b))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	tb.Cleanup(srv.Close)
	return srv
}

// Annotations are what a node publishes for srv: its URL and the SHA-256
// of its certificate.
func Annotations(srv *httptest.Server) map[string]string {
	sum := sha256.Sum256(srv.Certificate().Raw)
	return map[string]string{netagent.AnnotationNodeAPI: srv.URL, netagent.AnnotationNodeAPICert: hex.EncodeToString(sum[:])}
}

// Container writes one container's three samples at now: its CPU
// counter in seconds, its working set, and its start time.
func Container(b *strings.Builder, ns, pod, container string, cpuSeconds float64, memBytes int64, started, now time.Time) {
	l := fmt.Sprintf("{container=%q,namespace=%q,pod=%q}", container, ns, pod)
	ms := now.UnixMilli()
	fmt.Fprintf(b, "container_cpu_usage_seconds_total%s %g %d\n", l, cpuSeconds, ms)
	fmt.Fprintf(b, "container_memory_working_set_bytes%s %d %d\n", l, memBytes, ms)
	fmt.Fprintf(b, "container_start_time_seconds%s %d %d\n", l, started.Unix(), started.UnixMilli())
}

// Node writes the node's two samples at now.
func Node(b *strings.Builder, cpuSeconds float64, memBytes int64, now time.Time) {
	ms := now.UnixMilli()
	fmt.Fprintf(b, "node_cpu_usage_seconds_total %g %d\nnode_memory_working_set_bytes %d %d\n", cpuSeconds, ms, memBytes, ms)
}
