package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// BenchmarkHTTPGetCheck measures one httpGet check against a loopback
// server: its time and, with -benchmem, what it allocates (a node with
// 100 pods probed every second runs 100 of these a second).
func BenchmarkHTTPGetCheck(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	spec := &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "/healthz", Port: api.FromInt32(int32(port))}}}
	t := Target{PodIP: netip.MustParseAddr("127.0.0.1")}
	var p Prober
	b.ReportAllocs()
	for b.Loop() {
		if r, msg := p.Probe(context.Background(), spec, t); r != Success {
			b.Fatal(msg)
		}
	}
}
