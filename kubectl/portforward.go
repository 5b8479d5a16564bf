package kubectl

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/portforward"
)

// port-forward follows kubectl's (k8s.io/kubectl/pkg/cmd/portforward):
//
//   - TYPE/NAME of a service, deployment, replicaset or statefulset picks
//     one pod of its selector: running and ready first, then running,
//     then the oldest (kubectl's sort.Reverse(ActivePods)); the pod must
//     be Running ("unable to forward port because pod is not running").
//   - Each port is [LOCAL:]REMOTE. For a pod (or a workload) REMOTE may be
//     a container port's name. For a service REMOTE is a service port
//     (number or name) and is translated to its targetPort on the chosen
//     pod (a named targetPort through the pod's container ports); LOCAL
//     defaults to the service port, not the target. An empty or 0 LOCAL
//     takes a free port.
//   - --address (default localhost: 127.0.0.1 and ::1) lists the local
//     addresses; each listener prints "Forwarding from ADDR:LOCAL ->
//     REMOTE", each accepted connection "Handling connection for LOCAL".
//   - One upgraded connection carries every port; when it is lost the
//     command ends with "lost connection to pod". A forwarded port nothing
//     listens on in the pod prints the node's error for that connection
//     and the command goes on.

type portForwardOptions struct {
	addresses []string
	timeout   time.Duration
}

func newPortForwardCommand(g *globals) *cobra.Command {
	o := &portForwardOptions{}
	cmd := &cobra.Command{
		Use:   "port-forward TYPE/NAME [LOCAL_PORT:]REMOTE_PORT [...[LOCAL_PORT_N:]REMOTE_PORT_N]",
		Short: "Forward one or more local ports to a pod",
		Long: `Forward local ports to a pod through the API server and the pod's node
(POST pods/NAME/portforward, SPDY). TYPE/NAME may be pod/x, svc/x, deploy/x,
rs/x or sts/x; for a Service the ports are service ports, forwarded to their
targetPort on one running pod.`,
		Example: `  skiff port-forward pod/web 8080:80
  skiff port-forward svc/web 8080:http
  skiff port-forward deploy/web 8080:80 9090:metrics --address 0.0.0.0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError("TYPE/NAME and list of ports are required for port-forward")
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			return s.portForward(cmd.Context(), args[0], args[1:], o)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.addresses, "address", []string{"localhost"}, "addresses to listen on (comma separated); localhost means 127.0.0.1 and ::1")
	f.DurationVar(&o.timeout, "pod-running-timeout", time.Minute, "how long to wait for a pod of the object to be running")
	return cmd
}

// forwardPort is one [LOCAL:]REMOTE once resolved.
type forwardPort struct {
	local  uint16
	remote uint16
}

func (s *session) portForward(ctx context.Context, target string, specs []string, o *portForwardOptions) error {
	obj, pod, err := s.forwardablePod(ctx, target, o.timeout)
	if err != nil {
		return err
	}
	ports, err := forwardPorts(specs, obj, pod)
	if err != nil {
		return err
	}
	pf, err := s.dialPortForward(ctx, pod.Namespace, pod.Name)
	if err != nil {
		return err
	}
	defer pf.Close()
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	defer closeAll()
	for i, p := range ports {
		n := 0
		var lerr error
		for _, addr := range listenAddrs(o.addresses) {
			ln, err := net.Listen(addr.network, net.JoinHostPort(addr.host, strconv.Itoa(int(p.local))))
			if err != nil {
				lerr = err
				continue
			}
			if p.local == 0 {
				// A free port: the same one on the other addresses.
				p.local = uint16(ln.Addr().(*net.TCPAddr).Port)
				ports[i].local = p.local
			}
			lns = append(lns, &forwardListener{Listener: ln, port: p})
			fmt.Fprintf(s.env.Out, "Forwarding from %s -> %d\n", ln.Addr(), p.remote)
			n++
		}
		if n == 0 {
			return fmt.Errorf("unable to listen on port %d: %v", p.local, lerr)
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, ln := range lns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fl := ln.(*forwardListener)
			for {
				c, err := fl.Accept()
				if err != nil {
					return
				}
				fmt.Fprintf(s.env.Out, "Handling connection for %d\n", fl.port.local)
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := pf.Forward(c, fl.port.remote); err != nil {
						fmt.Fprintf(s.env.ErrOut, "error: an error occurred forwarding %d -> %d: %v\n", fl.port.local, fl.port.remote, err)
					}
				}()
			}
		}()
	}
	select {
	case <-ctx.Done():
		closeAll()
		pf.Close()
		return nil
	case <-pf.Done():
		closeAll()
		return errors.New("lost connection to pod")
	}
}

type forwardListener struct {
	net.Listener
	port forwardPort
}

type listenAddr struct{ network, host string }

// listenAddrs expands localhost to 127.0.0.1 and ::1, as kubectl does.
func listenAddrs(addrs []string) []listenAddr {
	var out []listenAddr
	for _, a := range addrs {
		switch a = strings.TrimSpace(a); a {
		case "localhost":
			out = append(out, listenAddr{"tcp4", "127.0.0.1"}, listenAddr{"tcp6", "::1"})
		default:
			nw := "tcp4"
			if strings.Contains(a, ":") {
				nw = "tcp6"
			}
			out = append(out, listenAddr{nw, a})
		}
	}
	return out
}

// forwardablePod resolves TYPE/NAME (or a bare pod name) to the pod and,
// for a service, the service.
func (s *session) forwardablePod(ctx context.Context, target string, timeout time.Duration) (*api.Service, *api.Pod, error) {
	podInfo, err := s.resolve("pods")
	if err != nil {
		return nil, nil, err
	}
	typ, name, ok := strings.Cut(target, "/")
	if !ok {
		typ, name = "pods", target
	}
	info, err := s.resolve(typ)
	if err != nil {
		return nil, nil, err
	}
	var svc *api.Service
	var sel *api.LabelSelector
	switch info.Resource {
	case "pods":
		var pod api.Pod
		if err := s.c.Get(ctx, podInfo, s.ns, name, &pod); err != nil {
			return nil, nil, err
		}
		if pod.Status.Phase != api.PodRunning {
			return nil, nil, fmt.Errorf("unable to forward port because pod is not running. Current status=%v", pod.Status.Phase)
		}
		return nil, &pod, nil
	case "services":
		svc = &api.Service{}
		if err := s.c.Get(ctx, info, s.ns, name, svc); err != nil {
			return nil, nil, err
		}
		if len(svc.Spec.Selector) == 0 {
			return nil, nil, fmt.Errorf("invalid service '%s': Service is defined without a selector", name)
		}
		sel = &api.LabelSelector{MatchLabels: svc.Spec.Selector}
	case "deployments", "replicasets", "statefulsets", "daemonsets", "replicationcontrollers":
		var obj struct {
			Spec struct {
				Selector *api.LabelSelector `json:"selector"`
			} `json:"spec"`
		}
		p, err := client.ResourcePath(info, s.ns, name)
		if err != nil {
			return nil, nil, err
		}
		if err := s.c.Do(ctx, "GET", p, nil, &obj); err != nil {
			return nil, nil, err
		}
		sel = obj.Spec.Selector
	default:
		return nil, nil, fmt.Errorf("cannot attach to %s: selector for %s not implemented", info.Kind, objectRef(info, name))
	}
	deadline := time.Now().Add(timeout)
	for {
		pods := s.podsOf(ctx, s.ns, sel)
		if len(pods) > 0 {
			pod := firstActivePod(pods)
			if pod.Status.Phase == api.PodRunning || time.Now().After(deadline) {
				if pod.Status.Phase != api.PodRunning {
					return nil, nil, fmt.Errorf("unable to forward port because pod is not running. Current status=%v", pod.Status.Phase)
				}
				return svc, pod, nil
			}
		} else if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("timed out waiting for the condition: no pods found for %s", objectRef(info, name))
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// firstActivePod is kubectl's pick: running and ready, then running,
// then the oldest, then by name.
func firstActivePod(pods []api.Pod) *api.Pod {
	rank := func(p *api.Pod) int {
		switch {
		case p.Status.Phase == api.PodRunning && api.IsPodReady(p):
			return 0
		case p.Status.Phase == api.PodRunning:
			return 1
		}
		return 2
	}
	pods = slices.Clone(pods)
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := &pods[i], &pods[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if !a.CreationTimestamp.Equal(b.CreationTimestamp.Time) {
			return a.CreationTimestamp.Before(b.CreationTimestamp.Time)
		}
		return a.Name < b.Name
	})
	return &pods[0]
}

// forwardPorts parses [LOCAL:]REMOTE, resolving names (kubectl's
// translateServicePortToTargetPort and convertPodNamedPortToNumber).
func forwardPorts(specs []string, svc *api.Service, pod *api.Pod) ([]forwardPort, error) {
	var out []forwardPort
	for _, spec := range specs {
		local, remote, hasLocal := strings.Cut(spec, ":")
		if !hasLocal {
			local, remote = spec, spec
		}
		var remoteNum int32
		if svc != nil {
			n, err := strconv.Atoi(remote)
			if err != nil {
				found := false
				for _, sp := range svc.Spec.Ports {
					if sp.Name == remote {
						n, found = int(sp.Port), true
					}
				}
				if !found {
					//lint:ignore ST1005 kubectl's exact text
					return nil, fmt.Errorf("Service '%s' does not have a named port '%s'", svc.Name, remote)
				}
				if local == remote {
					local = strconv.Itoa(n)
				}
			}
			if n < 1 || n > 65535 {
				return nil, fmt.Errorf("port %s is not a valid port number", spec)
			}
			var sp *api.ServicePort
			for i := range svc.Spec.Ports {
				if svc.Spec.Ports[i].Port == int32(n) {
					sp = &svc.Spec.Ports[i]
				}
			}
			if sp == nil {
				//lint:ignore ST1005 kubectl's exact text
				return nil, fmt.Errorf("Service %s does not have a service port %d", svc.Name, n)
			}
			remoteNum = int32(n)
			if svc.Spec.ClusterIP != "None" {
				tp, ok := api.FindPort(pod, sp)
				if !ok {
					//lint:ignore ST1005 kubectl's exact text
					return nil, fmt.Errorf("Pod '%s' does not have a named port '%s'", pod.Name, sp.TargetPort.StrVal)
				}
				remoteNum = tp
			}
		} else {
			n, err := strconv.Atoi(remote)
			if err != nil {
				found := false
				for _, c := range pod.Spec.Containers {
					for _, p := range c.Ports {
						if p.Name == remote && !found {
							n, found = int(p.ContainerPort), true
						}
					}
				}
				if !found {
					//lint:ignore ST1005 kubectl's exact text
					return nil, fmt.Errorf("Pod '%s' does not have a named port '%s'", pod.Name, remote)
				}
				if local == remote {
					local = strconv.Itoa(n)
				}
			}
			remoteNum = int32(n)
		}
		if remoteNum < 1 || remoteNum > 65535 {
			return nil, fmt.Errorf("remote port must be > 0 and < 65536: %s", spec)
		}
		l := uint64(0)
		if local != "" {
			var err error
			if l, err = strconv.ParseUint(local, 10, 16); err != nil {
				return nil, fmt.Errorf("error parsing local port '%s': %v", local, err)
			}
		}
		out = append(out, forwardPort{local: uint16(l), remote: uint16(remoteNum)})
	}
	return out, nil
}

// dialPortForward upgrades POST pods/NAME/portforward to SPDY over its own
// HTTP/1.1 TLS connection (an upgrade cannot ride HTTP/2).
func (s *session) dialPortForward(ctx context.Context, ns, name string) (*portforward.Client, error) {
	podInfo, err := s.resolve("pods")
	if err != nil {
		return nil, err
	}
	p, err := client.ResourcePath(podInfo, ns, name, "portforward")
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(s.raw.base + p)
	if err != nil {
		return nil, err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[bool]string{true: "443", false: "80"}[u.Scheme == "https"])
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	var c net.Conn
	if u.Scheme == "https" {
		var cfg *tls.Config
		if t, ok := s.raw.hc.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
			cfg = t.TLSClientConfig.Clone()
		} else {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		cfg.NextProtos = []string{"http/1.1"}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		c, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", host)
	} else {
		c, err = d.DialContext(ctx, "tcp", host)
	}
	if err != nil {
		return nil, fmt.Errorf("error upgrading connection: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	req.Header = portforward.UpgradeHeader()
	req.Header.Set("User-Agent", "skiff-cli")
	if s.raw.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.raw.token)
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("error upgrading connection: %w", err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("error upgrading connection: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer c.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return nil, fmt.Errorf("error upgrading connection: %w", statusError(resp.StatusCode, data))
	}
	_ = c.SetDeadline(time.Time{})
	return portforward.NewClient(&bufferedConn{Conn: c, r: br})
}

// bufferedConn reads what the response reader buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
