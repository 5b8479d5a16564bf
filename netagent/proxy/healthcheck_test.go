package proxy

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

func TestProxyHealthz(t *testing.T) {
	h := &proxyHealth{timeout: time.Minute}
	tests := []struct {
		name   string
		synced time.Time
		code   int
	}{
		{"never synced", time.Time{}, http.StatusServiceUnavailable},
		{"recent sync", time.Now(), http.StatusOK},
		{"stale sync", time.Now().Add(-2 * time.Minute), http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.synced.IsZero() {
				h.synced(tt.synced)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != tt.code {
				t.Errorf("code = %d, want %d", rec.Code, tt.code)
			}
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body.String(), err)
			}
			if body["nodeEligible"] != true || body["currentTime"] == "" {
				t.Errorf("body = %v", body)
			}
		})
	}
}

func freePort(t *testing.T) int32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

func get(t *testing.T, port int32) (int, string, http.Header, error) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://127.0.0.1:" + strconv.Itoa(int(port)) + "/")
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header, nil
}

func TestHealthCheckNodePortServers(t *testing.T) {
	ph := &proxyHealth{timeout: time.Minute}
	ph.synced(time.Now())
	var lc net.ListenConfig
	hs := &healthServers{listen: lc.Listen, addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}, proxy: ph,
		log: slog.New(slog.DiscardHandler)}
	defer hs.closeAll()
	port := freePort(t)
	ctx := t.Context()

	hs.sync(ctx, map[int32]healthService{port: {Namespace: "ns", Name: "web", LocalEndpoints: 2}})
	code, body, hdr, err := get(t, port)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Service struct {
			Namespace, Name string
		} `json:"service"`
		LocalEndpoints      int  `json:"localEndpoints"`
		ServiceProxyHealthy bool `json:"serviceProxyHealthy"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	if code != 200 || got.Service.Namespace != "ns" || got.Service.Name != "web" || got.LocalEndpoints != 2 || !got.ServiceProxyHealthy {
		t.Errorf("with 2 local endpoints: %d %q", code, body)
	}
	if hdr.Get("X-Load-Balancing-Endpoint-Weight") != "2" || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", hdr)
	}

	hs.sync(ctx, map[int32]healthService{port: {Namespace: "ns", Name: "web", LocalEndpoints: 0}})
	if code, body, _, err := get(t, port); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("with no local endpoint: %d %q %v, want 503", code, body, err)
	}

	hs.sync(ctx, map[int32]healthService{port: {Namespace: "ns", Name: "web", LocalEndpoints: 1}})
	ph.synced(time.Now().Add(-time.Hour))
	if code, body, _, err := get(t, port); err != nil || code != http.StatusServiceUnavailable || !json.Valid([]byte(body)) {
		t.Errorf("with an unhealthy proxy: %d %q %v, want 503", code, body, err)
	}

	hs.sync(ctx, nil)
	if len(hs.ports()) != 0 {
		t.Errorf("ports still served: %v", hs.ports())
	}
	if _, _, _, err := get(t, port); err == nil {
		t.Error("the server still answers after its Service went away")
	}
}
