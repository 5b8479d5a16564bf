package netagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
)

// TestProxyE2E runs the agent with the real service proxy (RunProxy) in
// its test-created node namespace: pod a reaches a ClusterIP Service
// backed by a and b, and only a once b is deleted.
func TestProxyE2E(t *testing.T) {
	requireNode(t)
	for _, mode := range []string{"iptables", "nftables"} {
		t.Run(mode, func(t *testing.T) {
			s := startServer(t)
			admin, err := s.Client()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			n := newNodeWith(t, s, "node-proxy-"+mode, func(n *node) {
				n.cfg.ProxyMode = mode
				n.proxy = netagent.RunProxy
			})
			for _, name := range []string{"a", "b"} {
				p := netexecPod(name, "netexec", "--http-port=8080", "--udp-port=8081")
				p.Labels["svc"] = "web"
				if err := admin.Create(ctx, resPods, "default", p); err != nil {
					t.Fatal(err)
				}
			}
			pa := waitPod(t, admin, "a", 30*time.Second, "Ready", podReady)
			waitPod(t, admin, "b", 30*time.Second, "Ready", podReady)
			ipA := netip.MustParseAddr(pa.Status.PodIP)

			svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: api.ServiceSpec{Selector: map[string]string{"svc": "web"},
					Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
			if err := admin.Create(ctx, resServices, "default", svc); err != nil {
				t.Fatal(err)
			}
			var got api.Service
			if err := admin.Get(ctx, resServices, "default", "web", &got); err != nil {
				t.Fatal(err)
			}
			vip := got.Spec.ClusterIP
			if _, err := netip.ParseAddr(vip); err != nil {
				t.Fatalf("web's clusterIP %q: %v", vip, err)
			}

			eventually(t, 20*time.Second, "a reaches both pods through "+vip+":80", func() (bool, error) {
				seen, err := n.dialTries(ipA, vip, 80, 10)
				if err != nil {
					return false, err
				}
				return slices.Equal(seen, []string{"a", "b"}), fmt.Errorf("answers %v", seen)
			})

			one := int64(1)
			if err := admin.Delete(ctx, resPods, "default", "b", client.DeleteOptions{GracePeriodSeconds: &one}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "only a answers at "+vip+":80 after b's deletion", func() (bool, error) {
				seen, err := n.dialTries(ipA, vip, 80, 10)
				if err != nil {
					return false, err
				}
				return slices.Equal(seen, []string{"a"}), fmt.Errorf("answers %v", seen)
			})

			if err := admin.Delete(ctx, resPods, "default", "a", client.DeleteOptions{GracePeriodSeconds: &one}); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"a", "b"} {
				eventually(t, 15*time.Second, name+" deleted", func() (bool, error) {
					var p api.Pod
					err := admin.Get(ctx, resPods, "default", name, &p)
					return client.IsNotFound(err), err
				})
			}
		})
	}
}

// dialTries asks from's netexec to reach host:port tries times (/dial)
// and returns the distinct answers, sorted. Any failed try is an error.
func (n *node) dialTries(from netip.Addr, host string, port, tries int) ([]string, error) {
	q := url.Values{"host": {host}, "port": {fmt.Sprint(port)}, "request": {"hostname"}, "protocol": {"http"}, "tries": {fmt.Sprint(tries)}}
	resp, err := n.http().Get(fmt.Sprintf("http://%s/dial?%s", net.JoinHostPort(from.String(), "8080"), q.Encode()))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("dial %s:%d: %d %s", host, port, resp.StatusCode, b)
	}
	var r dialResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("dial answer %q: %v", b, err)
	}
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("dial %s:%d: errors %v (answers %v)", host, port, r.Errors, r.Responses)
	}
	seen := slices.Clone(r.Responses)
	slices.Sort(seen)
	return slices.Compact(seen), nil
}
