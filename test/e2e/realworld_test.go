package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netexec"
)

// rwSet is one manifest set of test/realworld as its user applies it.
type rwSet struct {
	name, ns string
	kust     string   // a kustomization dir (kubectl kustomize), or
	files    []string // plain files, applied together, or
	// kustomization, when set, is the user's own kustomization.yaml, which
	// the set does not hold (wordpress: the tutorial's secretGenerator):
	// the test writes it next to copies of files and renders that
	// directory with kubectl kustomize, as the tutorial's `kubectl apply
	// -k ./` does.
	kustomization string
	// volumes are the claimed mounts the data check writes into (none when
	// the set's pods mount no claim).
	volumes []rwVolume
	// env are variables the set's pods must see with these values
	// (sourced from a Secret: the generated name reaches the pods).
	env []rwEnv
	// dials are the connections the set's own pods make to each other by
	// Service name, through the pod's resolv.conf.
	dials []rwDial
}

// rwVolume is a claimed mount of the pods matching selector.
type rwVolume struct{ selector, path string }

// rwEnv is a variable of the pods matching selector.
type rwEnv struct{ selector, name, value string }

// rwDial is a pod matching from reaching host:port, answered by a pod
// matching to.
type rwDial struct {
	from, host string
	port       int
	to         string
}

// rwPassword is the literal of wordpress's secretGenerator.
const rwPassword = "skiff-e2e-pass"

var rwSets = []rwSet{
	{name: "uptime-kuma", ns: "uptime-kuma", files: []string{"uptime-kuma/pvc.yaml", "uptime-kuma/deployment.yaml", "uptime-kuma/service.yaml"},
		volumes: []rwVolume{{"", "/app/data"}}},
	{name: "home-assistant", ns: "home-assistant", kust: "home-assistant/overlay", volumes: []rwVolume{{"", "/config"}}},
	{name: "pihole", ns: "pihole", files: []string{"pihole/envconfig_pihole.yaml", "pihole/nfs-pv-pihole.yaml", "pihole/nfs-pvc-pihole.yaml",
		"pihole/deploy_pihole.yaml", "pihole/service_tcp_pihole.yaml", "pihole/service_udp_pihole.yaml"}},
	{name: "wordpress", ns: "wordpress", files: []string{"k8s-website-apps/wordpress/mysql-deployment.yaml", "k8s-website-apps/wordpress/wordpress-deployment.yaml"},
		kustomization: `secretGenerator:
- name: mysql-pass
  literals:
  - password=` + rwPassword + `
resources:
  - mysql-deployment.yaml
  - wordpress-deployment.yaml
`,
		volumes: []rwVolume{{"tier=mysql", "/var/lib/mysql"}, {"tier=frontend", "/var/www/html"}},
		env: []rwEnv{{"tier=mysql", "MYSQL_ROOT_PASSWORD", rwPassword}, {"tier=mysql", "MYSQL_PASSWORD", rwPassword},
			{"tier=frontend", "WORDPRESS_DB_PASSWORD", rwPassword}},
		dials: []rwDial{{from: "tier=frontend", host: "wordpress-mysql", port: 3306, to: "tier=mysql"}}},
}

// TestRealWorldSets runs four of test/realworld's sets that claim volumes
// and expose Services on a real node with the containerd runtime, once in
// each proxy mode (iptables, nftables): uptime-kuma (files),
// home-assistant (kubectl kustomize of its overlay), pihole (files) and
// k8s-website-apps' wordpress (the Kubernetes tutorial's mysql and
// wordpress, through the tutorial's own kustomization: a secretGenerator
// for mysql-pass next to the two files), each in its namespace. See
// docs/testing.md for why jellyfin, gitea, podinfo, guestbook and the
// other sets are left out. There is no internet here,
// so the real images cannot be pulled: every container of a Deployment or
// StatefulSet gets image skiff.local/netexec:dev and command [skiff netexec
// --http-port=P --udp-port=-1] with its args dropped, P being the port the
// container's httpGet or tcpSocket probe targets, else its first
// containerPort (pihole's first containerPort is DNS 53 while its probes
// and its HTTP Service use 80; wordpress's mysql answers HTTP on 3306).
// Everything else stays as written (probes,
// volumes, claims, env, securityContext, resources), with two changes an
// operator or the image would make: netexec answers 404 on paths it does
// not serve, so pihole's httpGet probes on /admin.index.php are pointed at
// /healthz; and uptime-kuma's claim names the class longhorn, which does
// not exist here, so the test creates a StorageClass longhorn with the
// built-in provisioner skiff.dev/local-path, as an operator would.
// wordpress's claims name no class and get the default one (local-path).
// home-assistant's Ingress is applied and stored (Skiff runs no ingress
// controller: no Ingress gets an address, as on a cluster without one;
// docs/api.md). The swap is made in Go on the decoded objects; the files
// are not edited.
//
// It checks that every workload's pods are Running and Ready, that every
// claim binds (pihole's to the user's own NFS PersistentVolume, which its
// pod never mounts), that each Service's HTTP port answers 200 from
// netexec at its ClusterIP from the node namespace (a headless Service,
// wordpress-mysql: at each of its pods) and that
// <svc>.<ns>.svc.cluster.local resolves to it through the node DNS (a
// headless one: to its Ready pods' addresses), that a Service's node port
// and LoadBalancer address (from --lb-cidr; pihole's loadBalancerIP is
// outside it) answer from another namespace (ext, as a client on the LAN),
// that the Secret a kustomization generated (its name with a hash) reaches
// the containers' environment through secretKeyRef, that wordpress's pod
// reaches `wordpress-mysql:3306` (its WORDPRESS_DB_HOST) by the short name
// through its resolv.conf, and, where the pods mount a claim, that a file
// written into it with `skiff exec` is read back by the pod that replaces
// the deleted one.
func TestRealWorldSets(t *testing.T) {
	kubectlBin := os.Getenv("KUBECTL")
	if kubectlBin == "" {
		var err error
		if kubectlBin, err = exec.LookPath("kubectl"); err != nil {
			t.Skip("needs kubectl (>= 1.27, its built-in kustomize) on PATH or $KUBECTL to render the kustomizations")
		}
	}
	for _, mode := range []string{"iptables", "nftables"} {
		t.Run(mode, func(t *testing.T) { runRealWorldSets(t, kubectlBin, mode) })
	}
}

func runRealWorldSets(t *testing.T, kubectlBin, mode string) {
	c := newContainerdCluster(t, mode)
	root, err := filepath.Abs("../realworld")
	if err != nil {
		t.Fatal(err)
	}
	c.mustCLI("apply", "-f", writeFile(t, "longhorn.yaml", `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: longhorn}
provisioner: skiff.dev/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
`))
	start := time.Now()
	for _, s := range rwSets {
		c.mustCLI("create", "namespace", s.ns)
		var out []string
		for _, d := range renderSet(t, kubectlBin, root, s) {
			var obj map[string]any
			if err := yaml.Unmarshal(d, &obj); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if obj == nil {
				continue
			}
			swapImages(obj)
			b, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		c.mustCLI("apply", "-n", s.ns, "-f", writeFile(t, s.name+".yaml", strings.Join(out, "---\n")))
	}
	for _, s := range rwSets {
		c.run(t, s.name, func(t *testing.T) { c.checkRealWorldSet(t, s) })
	}
	t.Logf("realworld sets (%s): apply -> all checks: %v", mode, time.Since(start).Round(time.Millisecond))
	for _, s := range rwSets {
		c.mustCLI("delete", "namespace", s.ns)
	}
}

// renderSet is the YAML documents of s as its user applies them.
func renderSet(t *testing.T, kubectlBin, root string, s rwSet) [][]byte {
	t.Helper()
	kust := ""
	switch {
	case s.kust != "":
		kust = filepath.Join(root, s.kust)
	case s.kustomization != "":
		kust = t.TempDir()
		for _, f := range s.files {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(kust, filepath.Base(f)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(kust, "kustomization.yaml"), []byte(s.kustomization), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if kust != "" {
		cmd := exec.Command(kubectlBin, "kustomize", kust)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: kubectl kustomize: %v", s.name, err)
		}
		return splitDocs(out)
	}
	var docs [][]byte
	for _, f := range s.files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, splitDocs(b)...)
	}
	return docs
}

// checkRealWorldSet checks one applied set (see TestRealWorldSets).
func (c *cluster) checkRealWorldSet(t *testing.T, s rwSet) {
	ctx := context.Background()
	eventually(t, 90*time.Second, s.name+": every pod Running and Ready", func() (bool, error) {
		ps := c.pods(s.ns, "")
		if len(ps) == 0 {
			return false, fmt.Errorf("no pods")
		}
		for i := range ps {
			if ps[i].Status.Phase != "Running" || !api.IsPodReady(&ps[i]) {
				return false, fmt.Errorf("%s: %s %+v", ps[i].Name, ps[i].Status.Phase, ps[i].Status.ContainerStatuses)
			}
		}
		return true, nil
	})
	if s.name == "home-assistant" {
		if out := c.mustCLI("get", "ingress", "-n", s.ns, "--no-headers"); !regexp.MustCompile(`^home-assistant\s+nginx\s+example\.com\s+80, 443\s`).MatchString(out) {
			t.Errorf("home-assistant's Ingress:\n%s", out)
		}
	}
	eventually(t, 30*time.Second, s.name+": every claim Bound", func() (bool, error) {
		out := c.mustCLI("get", "pvc", "-n", s.ns, "--no-headers")
		if strings.TrimSpace(out) == "" || strings.Count(out, "Bound") != len(strings.Split(strings.TrimSpace(out), "\n")) {
			return false, fmt.Errorf("%s", out)
		}
		return true, nil
	})
	var svcs api.ServiceList
	if err := c.admin.List(ctx, resServices, s.ns, client.ListOptions{}, &svcs); err != nil {
		t.Fatal(err)
	}
	hc, ext := httpIn(c.node, 3*time.Second), httpIn(c.ext, 3*time.Second)
	answered := 0
	for _, svc := range svcs.Items {
		name := svc.Name + "." + s.ns + ".svc.cluster.local"
		headless := api.IsHeadlessService(&svc)
		want := []string{svc.Spec.ClusterIP}
		if headless {
			want = nil
			for _, p := range c.pods(s.ns, selectorString(svc.Spec.Selector)) {
				if api.IsPodReady(&p) {
					want = append(want, p.Status.PodIP)
				}
			}
			slices.Sort(want)
		}
		eventually(t, 15*time.Second, name+" resolves", func() (bool, error) {
			ips, _, err := c.aRecords(name)
			return err == nil && len(want) > 0 && slices.Equal(ips, want), fmt.Errorf("%v %v want %v", ips, err, want)
		})
		lbIP := ""
		if svc.Spec.Type == api.ServiceTypeLoadBalancer {
			eventually(t, 15*time.Second, svc.Name+" gets a LoadBalancer address", func() (bool, error) {
				var cur api.Service
				if err := c.admin.Get(ctx, resServices, s.ns, svc.Name, &cur); err != nil {
					return false, err
				}
				if ing := cur.Status.LoadBalancer.Ingress; len(ing) == 1 {
					lbIP = ing[0].IP
				}
				return lbIP != "", fmt.Errorf("status %+v", cur.Status)
			})
			if a, err := netip.ParseAddr(lbIP); err != nil || !netip.MustParsePrefix(lbPool).Contains(a) {
				t.Fatalf("%s got LoadBalancer address %q, outside --lb-cidr %s", svc.Name, lbIP, lbPool)
			}
		}
		for _, p := range svc.Spec.Ports {
			if p.Protocol == "UDP" || !c.servesHTTP(s.ns, svc, p.Port) {
				continue
			}
			// Where each address is reached from.
			targets := map[string]*http.Client{}
			if headless {
				tp := p.Port
				if p.TargetPort.Type == api.Int && p.TargetPort.IntVal != 0 {
					tp = p.TargetPort.IntVal
				}
				for _, ip := range want {
					targets[net.JoinHostPort(ip, strconv.Itoa(int(tp)))] = hc
				}
			} else {
				targets[net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(p.Port)))] = hc
			}
			if p.NodePort != 0 {
				targets[net.JoinHostPort(nodeIP, strconv.Itoa(int(p.NodePort)))] = ext
			}
			if lbIP != "" {
				targets[net.JoinHostPort(lbIP, strconv.Itoa(int(p.Port)))] = ext
			}
			for addr, from := range targets {
				url := "http://" + addr + "/hostname"
				eventually(t, 20*time.Second, svc.Name+": "+url, func() (bool, error) {
					_, err := get(from, url)
					return err == nil, err
				})
			}
			answered++
		}
	}
	if answered == 0 {
		t.Fatalf("no Service port of %s answered HTTP", s.name)
	}
	for _, e := range s.env {
		pod := c.readyPod(s.ns, e.selector)
		// PID 1 of the container is netexec: its environment is the
		// container's.
		out := c.mustCLI("exec", "-n", s.ns, pod, "--", "skiff", "read", "/proc/1/environ")
		if !slices.Contains(strings.Split(out, "\x00"), e.name+"="+e.value) {
			t.Errorf("%s: %s=%s not in its environment: %q", pod, e.name, e.value, out)
		}
	}
	for _, d := range s.dials {
		from := c.pod(s.ns, c.readyPod(s.ns, d.from))
		q := url.Values{"host": {d.host}, "port": {strconv.Itoa(d.port)}, "request": {"hostname"}}
		u := "http://" + net.JoinHostPort(from.Status.PodIP, netexecPort(from)) + "/dial?" + q.Encode()
		to := c.readyPodNames(s.ns, d.to)
		eventually(t, 20*time.Second, from.Name+" reaches "+d.host+":"+strconv.Itoa(d.port), func() (bool, error) {
			body, err := get(hc, u)
			if err != nil {
				return false, err
			}
			var r netexec.DialResult
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				return false, fmt.Errorf("%q: %w", body, err)
			}
			return len(r.Responses) == 1 && slices.Contains(to, r.Responses[0]), fmt.Errorf("%+v, want one of %v", r, to)
		})
	}
	for _, v := range s.volumes {
		pod := c.readyPod(s.ns, v.selector)
		f := v.path + "/skiff-e2e"
		c.mustCLI("exec", "-n", s.ns, pod, "--", "skiff", "write", f, "survives-"+s.name)
		c.mustCLI("delete", "pod", "-n", s.ns, pod)
		eventually(t, 60*time.Second, s.name+": the new pod reads "+f, func() (bool, error) {
			for _, p := range c.pods(s.ns, v.selector) {
				if p.Name == pod || p.DeletionTimestamp != nil || !api.IsPodReady(&p) {
					continue
				}
				out, err := c.cli("exec", "-n", s.ns, p.Name, "--", "skiff", "read", f)
				return err == nil && strings.Contains(out, "survives-"+s.name), fmt.Errorf("%s: %q %v", p.Name, out, err)
			}
			return false, fmt.Errorf("no new Ready pod")
		})
	}
}

// readyPod is the first Ready pod of ns matching selector.
func (c *cluster) readyPod(ns, selector string) string {
	c.t.Helper()
	names := c.readyPodNames(ns, selector)
	if len(names) == 0 {
		c.t.Fatalf("no Ready pod in %s matching %q", ns, selector)
	}
	return names[0]
}

// netexecPort is the --http-port of the pod's first netexec container.
func netexecPort(p *api.Pod) string {
	for _, ct := range p.Spec.Containers {
		for _, a := range ct.Command {
			if v, ok := strings.CutPrefix(a, "--http-port="); ok {
				return v
			}
		}
	}
	return ""
}

// selectorString is a Service's selector as a label selector.
func selectorString(sel map[string]string) string {
	var kv []string
	for k, v := range sel {
		kv = append(kv, k+"="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}

// servesHTTP tells whether port of svc reaches a netexec HTTP port: its
// targetPort resolves, on one of the pods, to the port netexec listens on.
func (c *cluster) servesHTTP(ns string, svc api.Service, port int32) bool {
	ps := c.pods(ns, "")
	for _, sp := range svc.Spec.Ports {
		if sp.Port != port {
			continue
		}
		for _, p := range ps {
			for _, ct := range p.Spec.Containers {
				hp := ""
				for _, a := range ct.Command {
					if v, ok := strings.CutPrefix(a, "--http-port="); ok {
						hp = v
					}
				}
				for _, cp := range ct.Ports {
					if (sp.TargetPort.String() == cp.Name || sp.TargetPort.String() == strconv.Itoa(int(cp.ContainerPort))) &&
						strconv.Itoa(int(cp.ContainerPort)) == hp && cp.Protocol != "UDP" {
						return true
					}
				}
				if sp.TargetPort.String() == hp {
					return true
				}
			}
		}
	}
	return false
}

func splitDocs(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range bytes.Split(append([]byte("\n"), b...), []byte("\n---")) {
		if len(bytes.TrimSpace(d)) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

// swapImages gives every container of a Deployment's or StatefulSet's pod
// template exampleImage and `skiff netexec` on the port its probes target
// (else its first containerPort), and points httpGet probes at /healthz.
func swapImages(obj map[string]any) {
	if k := obj["kind"]; k != "Deployment" && k != "StatefulSet" {
		return
	}
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	ps, _ := tmpl["spec"].(map[string]any)
	cs, _ := ps["containers"].([]any)
	for _, ci := range cs {
		ct, _ := ci.(map[string]any)
		port := ""
		ports, _ := ct["ports"].([]any)
		named := map[string]string{}
		for _, pi := range ports {
			p, _ := pi.(map[string]any)
			n := fmt.Sprint(p["containerPort"])
			if port == "" {
				port = n
			}
			if s, ok := p["name"].(string); ok {
				named[s] = n
			}
		}
		probed := ""
		for _, pk := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
			pr, _ := ct[pk].(map[string]any)
			for _, h := range []string{"httpGet", "tcpSocket"} {
				if a, ok := pr[h].(map[string]any); ok {
					v := fmt.Sprint(a["port"])
					if n, ok := named[v]; ok {
						v = n
					}
					probed = v
					if h == "httpGet" {
						a["path"] = "/healthz"
					}
				}
			}
		}
		if probed != "" {
			port = probed
		}
		ct["image"] = exampleImage
		ct["command"] = []any{"skiff", "netexec", "--http-port=" + port, "--udp-port=-1"}
		delete(ct, "args")
	}
}
