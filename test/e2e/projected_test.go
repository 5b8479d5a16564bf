package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// TestProjectedAndDownwardAPIVolumes (process runtime): the token volume
// the ServiceAccount admission adds (a JWT token, ca.crt = the cluster CA,
// namespace), a downwardAPI volume (labels, name, a cpu limit, modes)
// whose labels file follows a label change in place (no restart), a
// projected volume of a ConfigMap and the downward API, the
// KUBERNETES_SERVICE_* env, and a pod with automountServiceAccountToken
// false that gets no token; no Event holds the token.
func TestProjectedAndDownwardAPIVolumes(t *testing.T) {
	c := newCluster(t, "iptables")
	ctx := context.Background()
	if err := c.admin.Create(ctx, resConfigMaps, "default", &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "v1"}}); err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	ro := int32(0o400)
	script := `while true; do echo "labels=$(tr '\n' , < ` + mnt + `/info/labels) name=$(cat ` + mnt + `/info/name) cpu=$(cat ` + mnt + `/info/cpu)` +
		` namemode=$(stat -L -c %a ` + mnt + `/info/name) lmode=$(stat -L -c %a ` + mnt + `/info/labels)` +
		` conf=$(cat ` + mnt + `/all/conf/k) pns=$(cat ` + mnt + `/all/ns)` +
		` ns=$(cat ` + saDir + `/namespace) dots=$(tr -cd . < ` + saDir + `/token | wc -c) tmode=$(stat -L -c %a ` + saDir + `/token)` +
		` ca=$(head -1 ` + saDir + `/ca.crt) host=$KUBERNETES_SERVICE_HOST port=$KUBERNETES_SERVICE_PORT"; sleep 0.5; done`
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "dapi", Labels: map[string]string{"app": "web"}}, Spec: api.PodSpec{
		Volumes: []api.Volume{
			{Name: "info", VolumeSource: api.VolumeSource{DownwardAPI: &api.DownwardAPIVolumeSource{Items: []api.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.labels"}},
				{Path: "name", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: &ro},
				{Path: "cpu", ResourceFieldRef: &api.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu", Divisor: new(api.Quantity("1m"))}},
			}}}},
			{Name: "all", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{Sources: []api.VolumeProjection{
				{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: "cfg"}, Items: []api.KeyToPath{{Key: "k", Path: "conf/k"}}}},
				{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{{Path: "ns", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			}}}},
		},
		Containers: []api.Container{{Name: "app", Image: "none", Command: []string{"sh", "-c", script},
			Resources:    api.ResourceRequirements{Limits: api.ResourceList{"cpu": "250m"}},
			VolumeMounts: []api.VolumeMount{{Name: "info", MountPath: mnt + "/info"}, {Name: "all", MountPath: mnt + "/all"}}}},
	}}
	if err := c.admin.Create(ctx, resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	noauto := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "noauto"}, Spec: api.PodSpec{AutomountServiceAccountToken: new(false),
		Containers: []api.Container{{Name: "app", Image: "none", Command: []string{"sh", "-c",
			`while true; do test -e ` + saDir + `/token && echo has-token || echo no-token; sleep 0.5; done`}}}}}
	if err := c.admin.Create(ctx, resPods, "default", noauto); err != nil {
		t.Fatal(err)
	}
	logs := func(pod string) string {
		out, _ := c.cli("logs", pod)
		return out
	}
	caLine := strings.SplitN(string(c.s.Server().Bundle().CACertPEM), "\n", 2)[0]
	eventually(t, 60*time.Second, "dapi shows its files", func() (bool, error) {
		out := logs("dapi")
		want := `labels=app="web" name=dapi cpu=250 namemode=400 lmode=644 conf=v1 pns=default ns=default dots=2 tmode=644 ca=` + caLine + ` host=10.96.0.1 port=443`
		return strings.Contains(out, want), fmt.Errorf("want %q\nlogs end: %q\nwaiting %s", want, out[max(0, len(out)-400):], waitingOf(c.pod("default", "dapi")))
	})
	p := c.pod("default", "dapi")
	var vol string
	for _, v := range p.Spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") && v.Projected != nil {
			vol = v.Name
		}
	}
	if vol == "" || len(p.Spec.Containers[0].VolumeMounts) != 3 || p.Spec.Containers[0].VolumeMounts[2].MountPath != saDir {
		t.Fatalf("admission: volumes %+v mounts %+v", p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts)
	}

	c.run(t, "automountServiceAccountToken false: no token", func(t *testing.T) {
		eventually(t, 30*time.Second, "noauto runs", func() (bool, error) {
			out := logs("noauto")
			return strings.Contains(out, "no-token"), fmt.Errorf("logs %q", out)
		})
		if out := logs("noauto"); strings.Contains(out, "has-token") {
			t.Fatalf("noauto sees a token: %q", out)
		}
		if vs := c.pod("default", "noauto").Spec.Volumes; len(vs) != 0 {
			t.Fatalf("noauto got volumes %+v", vs)
		}
	})

	c.run(t, "a label change reaches the downwardAPI file in place", func(t *testing.T) {
		c.mustCLI("label", "pod", "dapi", "tier=front")
		eventually(t, 30*time.Second, "the labels file has tier", func() (bool, error) {
			out := logs("dapi")
			return strings.Contains(out, `labels=app="web",tier="front" name=`), fmt.Errorf("logs end %q", out[max(0, len(out)-300):])
		})
		if cs := c.pod("default", "dapi").Status.ContainerStatuses; len(cs) != 1 || cs[0].RestartCount != 0 {
			t.Fatalf("the container restarted: %+v", cs)
		}
	})

	c.run(t, "no Event holds the token", func(t *testing.T) {
		file := filepath.Join(c.dataDir, "pods", string(p.UID), "volumes", "kubernetes.io~projected", vol, "token")
		tok, err := os.ReadFile(file)
		if err != nil || len(tok) < 20 {
			t.Fatalf("token: %d bytes, %v", len(tok), err)
		}
		if st, err := os.Stat(filepath.Dir(filepath.Dir(file))); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("projected volumes dir: %v %v", st, err)
		}
		var l api.EventList
		if err := c.admin.List(ctx, resEvents, "default", client.ListOptions{}, &l); err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Items {
			if strings.Contains(e.Message, string(tok)) {
				t.Fatalf("event %s holds the token", e.Reason)
			}
		}
	})
}

// TestInClusterClient (process runtime): a client-go program
// (test/kubectl-compat/cmd/incluster, rest.InClusterConfig) in a pod
// lists the pods of its namespace through the kubernetes Service with its
// mounted token and ca.crt, and is refused the Secrets. The Service's
// endpoint is the node address (--node-ip); the server listens on
// 127.0.0.1, so the test forwards that address's port, inside the node
// namespace, to it.
func TestInClusterClient(t *testing.T) {
	requireRoot(t)
	bin := buildInCluster(t)
	c := newCluster(t, "iptables")
	u, err := url.Parse(c.s.Server().URL())
	if err != nil {
		t.Fatal(err)
	}
	forwardFromNode(t, c, net.JoinHostPort(nodeIP, u.Port()), u.Host)
	ctx := context.Background()
	if err := c.admin.Create(ctx, resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "hidden"}, Data: map[string][]byte{"k": []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if err := c.admin.Create(ctx, resPods, "default", &api.Pod{ObjectMeta: api.ObjectMeta{Name: "incluster"}, Spec: api.PodSpec{
		Containers: []api.Container{{Name: "app", Image: "none", Command: []string{bin}}}}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the in-cluster client lists its pod and is refused the Secrets", func() (bool, error) {
		out, _ := c.cli("logs", "incluster")
		return strings.Contains(out, "host https://10.96.0.1:443 namespace default") && strings.Contains(out, "pods: incluster\n") &&
				strings.Contains(out, "secrets: forbidden=true"),
			fmt.Errorf("logs end %q; waiting %s", out[max(0, len(out)-600):], waitingOf(c.pod("default", "incluster")))
	})
}

// buildInCluster builds the client-go program from its own module
// (test/kubectl-compat).
func buildInCluster(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "incluster")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/incluster")
	cmd.Dir = "../kubectl-compat"
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building test/kubectl-compat/cmd/incluster: %v\n%s", err, out)
	}
	return bin
}

// forwardFromNode listens on from inside the node namespace (the test's)
// and forwards each connection to to (loopback, here) until the test
// ends, when the listener and every connection are closed.
func forwardFromNode(t *testing.T, c *cluster, from, to string) {
	t.Helper()
	var ln net.Listener
	if err := c.node.Do(func() error {
		var err error
		ln, err = net.Listen("tcp", from)
		return err
	}); err != nil {
		t.Fatalf("listen %s in the node namespace: %v", from, err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	track := func(cs ...net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		if conns == nil {
			return false
		}
		for _, c := range cs {
			conns[c] = true
		}
		return true
	}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		conns = nil
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer in.Close()
				out, err := net.DialTimeout("tcp", to, 5*time.Second)
				if err != nil {
					return
				}
				defer out.Close()
				if !track(in, out) {
					return
				}
				var cp sync.WaitGroup
				cp.Go(func() { _, _ = io.Copy(out, in); out.Close() })
				cp.Go(func() { _, _ = io.Copy(in, out); in.Close() })
				cp.Wait()
			})
		}
	})
}

// waitingOf is the reasons and messages of p's waiting containers.
func waitingOf(p *api.Pod) string {
	var out []string
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			out = append(out, fmt.Sprintf("%s: %s %s", cs.Name, w.Reason, w.Message))
		}
	}
	return strings.Join(out, "; ")
}
