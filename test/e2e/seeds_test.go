package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// production.yaml: a Service in another namespace, for the cross-namespace
// name rule.
const production = `apiVersion: v1
kind: Namespace
metadata: {name: production}
---
apiVersion: v1
kind: Pod
metadata: {name: prod-0, namespace: production, labels: {app: prod}}
spec:
  containers:
  - name: netexec
    image: skiff
    command: [skiff, netexec, --http-port=8080, --udp-port=-1]
    env:
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    readinessProbe:
      httpGet: {path: /healthz, port: 8080}
      periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata: {name: prod-svc, namespace: production}
spec:
  selector: {app: prod}
  ports: [{port: 80, targetPort: 8080}]
`

// TestSeeds walks the flow of docs/architecture.md in each proxy mode: apply examples/,
// names, DNS for every Service type, NodePort from outside, readiness,
// a rolling update under load with no failed request, scaling, and a
// Service's deletion.
func TestSeeds(t *testing.T) {
	for _, mode := range []string{"iptables", "nftables"} {
		t.Run(mode, func(t *testing.T) { runSeeds(t, mode) })
	}
}

func runSeeds(t *testing.T, mode string) {
	c := newCluster(t, mode)
	ctx := context.Background()

	// skiff apply -f examples/ → the client's first successful request
	// through the ClusterIP (logged: docs/performance.md, "End to end").
	start := time.Now()
	out := c.mustCLI("apply", "-f", examplesDir(t))
	for _, want := range []string{"deployment.apps/backend created", "service/backend-svc created", "pod/client created",
		"service/backend-nodeport created", "service/backend-lb created", "service/cache-redis-external created",
		"service/web created", "statefulset.apps/web created"} {
		if !strings.Contains(out, want) {
			t.Fatalf("apply -f examples/: no %q in\n%s", want, out)
		}
	}
	var first time.Duration
	eventually(t, 60*time.Second, "client reaches http://backend-svc", func() (bool, error) {
		if p := c.pod("default", "client"); !api.IsPodReady(p) {
			return false, fmt.Errorf("client not Ready")
		}
		_, err := c.spread("backend-svc", 80, 1)
		return err == nil, err
	})
	first = time.Since(start)
	t.Logf("%s: skiff apply -f examples/ -> first response through the ClusterIP: %v", mode, first.Round(time.Millisecond))

	var svc api.Service
	if err := c.admin.Get(ctx, resServices, "default", "backend-svc", &svc); err != nil {
		t.Fatal(err)
	}
	vip := svc.Spec.ClusterIP
	eventually(t, 30*time.Second, "3 backends Ready", func() (bool, error) {
		n := c.readyPodNames("default", "app=backend")
		return len(n) == 3, fmt.Errorf("ready: %v", n)
	})

	c.run(t, "ClusterIP spreads over the three backends", func(t *testing.T) {
		backends := c.readyPodNames("default", "app=backend")
		eventually(t, 20*time.Second, "all three answer at "+vip, func() (bool, error) {
			seen, err := c.spread(vip, 80, 30)
			return err == nil && slices.Equal(seen, backends), fmt.Errorf("seen %v want %v (%v)", seen, backends, err)
		})
		ready, _, _ := c.sliceEndpoints("default", "backend-svc")
		if len(ready) != 3 {
			t.Fatalf("EndpointSlice ready endpoints %v, want 3", ready)
		}
		if in := c.ruleEndpointIPs("default", "backend-svc", "http"); !slices.Equal(in, ready) {
			t.Fatalf("kernel rules send to %v, want the slice's %v:\n%s", in, ready, c.rules())
		}
		if mode == "iptables" {
			// kube-proxy's probabilities: 1/3, 1/2, then the rest.
			dump := c.rules()
			for _, p := range []string{"--probability 0.33333", "--probability 0.50000"} {
				if !strings.Contains(dump, p) {
					t.Errorf("no %q in the rules", p)
				}
			}
		}
	})

	c.run(t, "names from a pod", func(t *testing.T) {
		c.mustCLI("apply", "-f", writeFile(t, "production.yaml", production))
		eventually(t, 30*time.Second, "prod-0 Ready", func() (bool, error) {
			return api.IsPodReady(c.pod("production", "prod-0")), nil
		})
		backends := c.readyPodNames("default", "app=backend")
		for _, name := range []string{"backend-svc", "backend-svc.default", "backend-svc.default.svc", "backend-svc.default.svc.cluster.local"} {
			eventually(t, 10*time.Second, name+" from the client pod", func() (bool, error) {
				seen, err := c.spread(name, 80, 12)
				return err == nil && len(seen) > 0 && isSubset(seen, backends), fmt.Errorf("%v %v", seen, err)
			})
		}
		// Across namespaces the namespace is needed.
		eventually(t, 10*time.Second, "prod-svc.production from default", func() (bool, error) {
			seen, err := c.spread("prod-svc.production", 80, 3)
			return err == nil && slices.Equal(seen, []string{"prod-0"}), fmt.Errorf("%v %v", seen, err)
		})
		// The short name expands to prod-svc.default.svc.cluster.local
		// (NXDOMAIN), ... and finally prod-svc. (upstream: none here).
		if _, _, err := c.dial("prod-svc", 80, 1); err == nil || !strings.Contains(err.Error(), "lookup prod-svc") {
			t.Fatalf("the short name prod-svc from namespace default: %v, want a failed lookup", err)
		}
		if ips, rcode, err := c.aRecords("prod-svc.default.svc.cluster.local"); err != nil || rcode != dns.RcodeNameError {
			t.Fatalf("prod-svc.default.svc.cluster.local: %v rcode %d %v, want NXDOMAIN", ips, rcode, err)
		}
	})

	c.run(t, "DNS: headless, StatefulSet pod, ExternalName", func(t *testing.T) {
		eventually(t, 30*time.Second, "web-0 and web-1 Ready", func() (bool, error) {
			n := c.readyPodNames("default", "app=web")
			return slices.Equal(n, []string{"web-0", "web-1"}), fmt.Errorf("%v", n)
		})
		want := []string{c.podIP("default", "web-0"), c.podIP("default", "web-1")}
		slices.Sort(want)
		eventually(t, 10*time.Second, "web resolves to the pod IPs", func() (bool, error) {
			ips, _, err := c.aRecords("web.default.svc.cluster.local")
			return slices.Equal(ips, want), fmt.Errorf("%v %v", ips, err)
		})
		eventually(t, 10*time.Second, "web-0.web resolves to web-0", func() (bool, error) {
			ips, _, err := c.aRecords("web-0.web.default.svc.cluster.local")
			return slices.Equal(ips, []string{c.podIP("default", "web-0")}), fmt.Errorf("%v %v", ips, err)
		})
		// From a pod, through its search list: web-0.web.
		eventually(t, 10*time.Second, "web-0.web from the client pod", func() (bool, error) {
			seen, err := c.spread("web-0.web", 8080, 2)
			return err == nil && slices.Equal(seen, []string{"web-0"}), fmt.Errorf("%v %v", seen, err)
		})
		r, err := c.lookup("cache-redis-external.default.svc.cluster.local", dns.TypeCNAME)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Answer) != 1 || r.Answer[0].(*dns.CNAME).Target != "redis.prod.azurecache.net." {
			t.Fatalf("ExternalName answer: %v", r.Answer)
		}
		// The ClusterIP Service answers its ClusterIP.
		ips, _, err := c.aRecords("backend-svc.default.svc.cluster.local")
		if err != nil || !slices.Equal(ips, []string{vip}) {
			t.Fatalf("backend-svc A: %v %v, want %s", ips, err, vip)
		}
	})

	c.run(t, "NodePort from another netns through the node address", func(t *testing.T) {
		hc := httpIn(c.ext, 5*time.Second)
		backends := c.readyPodNames("default", "app=backend")
		seen := map[string]bool{}
		eventually(t, 20*time.Second, "all backends through "+nodeIP+":30080 from ext", func() (bool, error) {
			body, err := get(hc, "http://"+nodeIP+":30080/hostname")
			if err != nil {
				return false, err
			}
			seen[body] = true
			return len(seen) == len(backends), fmt.Errorf("seen %v", seen)
		})
		for b := range seen {
			if !slices.Contains(backends, b) {
				t.Fatalf("answer %q from a pod that is not a backend %v", b, backends)
			}
		}
	})

	c.run(t, "LoadBalancer address from --lb-cidr, reached from another netns", func(t *testing.T) {
		var lbIP string
		eventually(t, 10*time.Second, "backend-lb gets an address", func() (bool, error) {
			var s api.Service
			if err := c.admin.Get(ctx, resServices, "default", "backend-lb", &s); err != nil {
				return false, err
			}
			if ing := s.Status.LoadBalancer.Ingress; len(ing) == 1 {
				lbIP = ing[0].IP
			}
			return lbIP != "", fmt.Errorf("status %+v", s.Status)
		})
		if p := netip.MustParsePrefix(lbPool); !p.Contains(netip.MustParseAddr(lbIP)) {
			t.Fatalf("backend-lb got %s, outside --lb-cidr %s", lbIP, lbPool)
		}
		if out := c.mustCLI("get", "svc", "backend-lb"); !strings.Contains(out, lbIP) {
			t.Fatalf("skiff get svc backend-lb does not show %s as EXTERNAL-IP:\n%s", lbIP, out)
		}
		hc := httpIn(c.ext, 5*time.Second)
		backends := c.readyPodNames("default", "app=backend")
		seen := map[string]bool{}
		eventually(t, 20*time.Second, "all backends through "+lbIP+":80 from ext", func() (bool, error) {
			body, err := get(hc, "http://"+lbIP+"/hostname")
			if err != nil {
				return false, err
			}
			seen[body] = true
			return len(seen) == len(backends), fmt.Errorf("seen %v", seen)
		})
	})

	c.run(t, "a pod reaches a machine outside the cluster through the node's address", func(t *testing.T) {
		// ext has no route to the pods: only the egress masquerade (package
		// egress) lets its answer come back, to the node's address.
		var ln net.Listener
		if err := c.ext.Do(func() (err error) { ln, err = net.Listen("tcp", net.JoinHostPort(extIP, "9090")); return err }); err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			fmt.Fprint(w, host)
		})}
		go srv.Serve(ln)
		defer srv.Close()
		answers, errs, err := c.dial(extIP, 9090, 3)
		if err != nil || len(errs) > 0 || len(answers) != 3 {
			t.Fatalf("client -> %s:9090: answers %q, errors %v %v", extIP, answers, err, errs)
		}
		for _, a := range answers {
			if a != nodeIP {
				t.Fatalf("the outside machine saw %q, want the node's %s (answers %v)", a, nodeIP, answers)
			}
		}
	})

	c.run(t, "a pod failing readiness drops out and comes back", func(t *testing.T) {
		victim := c.readyPodNames("default", "app=backend")[0]
		ip := c.podIP("default", victim)
		hc := httpIn(c.node, 5*time.Second)
		if _, err := get(hc, "http://"+net.JoinHostPort(ip, "8080")+"/sethealth?status=503"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 15*time.Second, victim+" not ready in the EndpointSlice", func() (bool, error) {
			ready, notReady, _ := c.sliceEndpoints("default", "backend-svc")
			return !slices.Contains(ready, ip) && slices.Contains(notReady, ip), fmt.Errorf("ready %v", ready)
		})
		eventually(t, 10*time.Second, "rules without "+victim, func() (bool, error) {
			in := c.ruleEndpointIPs("default", "backend-svc", "http")
			return len(in) == 2 && !slices.Contains(in, ip), fmt.Errorf("rules to %v", in)
		})
		seen, err := c.spread(vip, 80, 30)
		if err != nil || slices.Contains(seen, victim) || len(seen) != 2 {
			t.Fatalf("after %s failed readiness: %v %v", victim, seen, err)
		}
		if _, err := get(hc, "http://"+net.JoinHostPort(ip, "8080")+"/sethealth?status=200"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, victim+" back in rotation", func() (bool, error) {
			seen, err := c.spread(vip, 80, 30)
			return err == nil && slices.Contains(seen, victim), fmt.Errorf("%v %v", seen, err)
		})
	})

	c.run(t, "a deleted pod leaves the rules while it still serves", func(t *testing.T) {
		// The termination delay (2s): the endpoint turns terminating and
		// leaves the kernel rules while the process still answers; only
		// then does it get SIGTERM.
		victim := c.readyPodNames("default", "app=backend")[0]
		ip := c.podIP("default", victim)
		hc := httpIn(c.node, 2*time.Second)
		c.mustCLI("delete", "pod", victim, "--wait=false")
		deleted := time.Now()
		eventually(t, 5*time.Second, victim+" terminating and out of the rules", func() (bool, error) {
			var l api.EndpointSliceList
			if err := c.admin.List(ctx, resSlices, "default", client.ListOptions{LabelSelector: "kubernetes.io/service-name=backend-svc"}, &l); err != nil {
				return false, err
			}
			term := false
			for _, sl := range l.Items {
				for _, e := range sl.Endpoints {
					cd := e.Conditions
					if e.Addresses[0] == ip && cd.Terminating != nil && *cd.Terminating && cd.Serving != nil && *cd.Serving &&
						cd.Ready != nil && !*cd.Ready {
						term = true
					}
				}
			}
			// (A replacement may already be Ready and in the rules.)
			in := c.ruleEndpointIPs("default", "backend-svc", "http")
			return term && len(in) >= 2 && !slices.Contains(in, ip), fmt.Errorf("terminating+serving %v, rules to %v", term, in)
		})
		body, err := get(hc, "http://"+net.JoinHostPort(ip, "8080")+"/hostname")
		if since := time.Since(deleted); err != nil || body != victim {
			t.Fatalf("%v after its deletion, out of the rules, %s no longer answers: %q %v", since, victim, body, err)
		} else {
			t.Logf("%s out of the rules and still serving %v after its deletion", victim, since.Round(time.Millisecond))
		}
		eventually(t, 30*time.Second, "3 ready backends again", func() (bool, error) {
			n := c.readyPodNames("default", "app=backend")
			return len(n) == 3 && !slices.Contains(n, victim), fmt.Errorf("%v", n)
		})
	})

	c.run(t, "rolling update under load: zero failed requests", func(t *testing.T) {
		res := rollingUpdateUnderLoad(t, c, vip)
		t.Logf("%s: rolling update in %v: ClusterIP from a pod %d requests (%.0f/s), %d failed; NodePort from another netns %d requests (%.0f/s), %d failed",
			mode, res.elapsed.Round(time.Millisecond), res.pod, res.podRate(), res.podFailed, res.node, res.nodeRate(), res.nodeFailed)
		if res.podFailed > 0 || res.nodeFailed > 0 {
			t.Fatalf("failed requests during the rolling update: %d through the ClusterIP (%v), %d through the NodePort (%v)",
				res.podFailed, res.podErr, res.nodeFailed, res.nodeErr)
		}
		if res.podRate() < 50 || res.nodeRate() < 50 {
			t.Fatalf("load too light to mean anything: %.0f/s and %.0f/s, want >= 50/s each", res.podRate(), res.nodeRate())
		}
	})

	c.run(t, "scale 3 -> 5 -> 2", func(t *testing.T) {
		for _, n := range []int{5, 2} {
			c.mustCLI("scale", "deployment/backend", fmt.Sprintf("--replicas=%d", n))
			eventually(t, 40*time.Second, fmt.Sprintf("%d ready backends", n), func() (bool, error) {
				names := c.readyPodNames("default", "app=backend")
				ready, _, _ := c.sliceEndpoints("default", "backend-svc")
				return len(names) == n && len(ready) == n, fmt.Errorf("pods %v, slice %v", names, ready)
			})
			eventually(t, 10*time.Second, fmt.Sprintf("rules over %d endpoints", n), func() (bool, error) {
				got := c.ruleEndpoints("default", "backend-svc", "http")
				return got == n, fmt.Errorf("%d", got)
			})
			backends := c.readyPodNames("default", "app=backend")
			eventually(t, 20*time.Second, fmt.Sprintf("the client reaches exactly the %d backends", n), func() (bool, error) {
				seen, err := c.spread("backend-svc", 80, 15*n)
				return err == nil && slices.Equal(seen, backends), fmt.Errorf("seen %v want %v (%v)", seen, backends, err)
			})
		}
	})

	c.run(t, "deleting a Service removes its slices, DNS name and rules", func(t *testing.T) {
		c.mustCLI("delete", "service", "backend-svc")
		eventually(t, 10*time.Second, "no EndpointSlice of backend-svc", func() (bool, error) {
			_, _, n := c.sliceEndpoints("default", "backend-svc")
			return n == 0, fmt.Errorf("%d slices", n)
		})
		eventually(t, 10*time.Second, "backend-svc NXDOMAIN", func() (bool, error) {
			ips, rcode, err := c.aRecords("backend-svc.default.svc.cluster.local")
			return err == nil && rcode == dns.RcodeNameError, fmt.Errorf("%v rcode %d %v", ips, rcode, err)
		})
		eventually(t, 10*time.Second, "no rules for backend-svc", func() (bool, error) {
			var left []string
			for _, l := range strings.Split(c.rules(), "\n") {
				if strings.Contains(l, "default/backend-svc") || strings.Contains(l, vip+" ") || strings.Contains(l, vip+"/") {
					left = append(left, l)
				}
			}
			return len(left) == 0, fmt.Errorf("still in the rules: %q", left)
		})
		// The NodePort Service of the same pods is untouched.
		if _, err := get(httpIn(c.ext, 5*time.Second), "http://"+nodeIP+":30080/hostname"); err != nil {
			t.Fatalf("backend-nodeport after deleting backend-svc: %v", err)
		}
	})
}

type loadResult struct {
	elapsed          time.Duration
	pod, podFailed   int64
	node, nodeFailed int64
	podErr, nodeErr  string
}

func (r loadResult) podRate() float64  { return float64(r.pod) / r.elapsed.Seconds() }
func (r loadResult) nodeRate() float64 { return float64(r.node) / r.elapsed.Seconds() }

// rollingUpdateUnderLoad runs `skiff rollout restart deployment/backend`
// while two loads run: the client pod requesting the ClusterIP (batches of
// its /dial, each try a new connection), and the outside namespace
// requesting the NodePort on the node address. It returns when every old
// pod is gone.
func rollingUpdateUnderLoad(t *testing.T, c *cluster, vip string) loadResult {
	var res loadResult
	var mu sync.Mutex
	var pod, podFailed, node, nodeFailed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // ClusterIP from the client pod
		for {
			select {
			case <-stop:
				return
			default:
			}
			answers, errs, err := c.dial(vip, 80, 10)
			if err != nil {
				podFailed.Add(1)
				mu.Lock()
				res.podErr = err.Error()
				mu.Unlock()
				continue
			}
			pod.Add(int64(len(answers) + len(errs)))
			if len(errs) > 0 {
				podFailed.Add(int64(len(errs)))
				mu.Lock()
				res.podErr = errs[0]
				mu.Unlock()
			}
		}
	})
	hc := httpIn(c.ext, 5*time.Second)
	for range 4 { // NodePort from outside: 4 clients at 25/s each, ~100/s
		wg.Go(func() {
			tick := time.NewTicker(40 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				node.Add(1)
				if _, err := get(hc, "http://"+nodeIP+":30080/hostname"); err != nil {
					nodeFailed.Add(1)
					mu.Lock()
					res.nodeErr = err.Error()
					mu.Unlock()
				}
			}
		})
	}
	start := time.Now()
	time.Sleep(500 * time.Millisecond) // load before the update
	old := c.readyPodNames("default", "app=backend")
	c.mustCLI("rollout", "restart", "deployment/backend")
	eventually(t, 60*time.Second, "rollout done and every old pod gone", func() (bool, error) {
		var d api.Deployment
		if err := c.admin.Get(context.Background(), resDeploys, "default", "backend", &d); err != nil {
			return false, err
		}
		st := d.Status
		done := st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == 3 && st.Replicas == 3 && st.AvailableReplicas == 3
		names := []string{}
		for _, p := range c.pods("default", "app=backend") {
			names = append(names, p.Name)
			if slices.Contains(old, p.Name) {
				done = false
			}
		}
		return done, fmt.Errorf("status %+v pods %v", st, names)
	})
	time.Sleep(500 * time.Millisecond) // load after the update
	close(stop)
	wg.Wait()
	res.elapsed = time.Since(start)
	res.pod, res.podFailed, res.node, res.nodeFailed = pod.Load(), podFailed.Load(), node.Load(), nodeFailed.Load()
	if now := c.readyPodNames("default", "app=backend"); len(now) != 3 || isSubset(now, old) {
		t.Fatalf("after the rollout: %v (before %v)", now, old)
	}
	return res
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
