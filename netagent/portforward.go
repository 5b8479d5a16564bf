package netagent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client/portforward"
	"github.com/skiff-dev/skiff/netagent/netns"
)

// Port-forward (the kubelet's /portforward/{namespace}/{pod}): the node
// API upgrades the connection (netagent/portforward has the wire
// protocols) and, for each forwarded connection, dials the pod's port on
// localhost inside the pod's network namespace, as the CRI runtimes do:
// the socket is made on a locked OS thread switched into the pod's netns
// (netns.Do), so an app listening on 127.0.0.1 only is reachable. IPv4
// (127.0.0.1) first, then IPv6 (::1); a port nothing listens on gives
// the client "error forwarding port N to pod NS/NAME, uid UID: failed to
// connect to localhost:N inside the pod's network namespace ...
// connection refused" on the error stream.

func (w *podWorker) setNetNSPath(p string) {
	w.mu.Lock()
	w.netnsPath = p
	w.mu.Unlock()
}

// podNetNS is the network namespace path of a running pod of this node.
func (a *Agent) podNetNS(namespace, name string) (*api.Pod, string, error) {
	a.mu.Lock()
	pm := a.pm
	a.mu.Unlock()
	if pm == nil {
		return nil, "", nodeAPIErrorf(http.StatusServiceUnavailable, "node %s is not ready yet", a.cfg.NodeName)
	}
	obj, ok := pm.pods.Get(namespace, name)
	pod, _ := obj.(*api.Pod)
	if !ok || pod == nil {
		return nil, "", nodeAPIErrorf(http.StatusNotFound, "pod %s/%s is not on node %s", namespace, name, a.cfg.NodeName)
	}
	pm.mu.Lock()
	w := pm.workers[string(pod.UID)]
	pm.mu.Unlock()
	path := ""
	if w != nil {
		w.mu.Lock()
		path = w.netnsPath
		w.mu.Unlock()
	}
	if path == "" {
		return nil, "", nodeAPIErrorf(http.StatusBadRequest, "pod %s/%s has no network namespace on node %s (not started, or finished)", namespace, name, a.cfg.NodeName)
	}
	return pod, path, nil
}

// portForwardHandler serves the node API's
// /portforward/{namespace}/{pod} (an upgrade, as the kubelet's; the
// route is streamRoutes').
func (a *Agent) portForwardHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.ServePortForward(w, r, r.PathValue("namespace"), r.PathValue("pod"))
	})
}

// ServePortForward serves one pods/portforward upgrade for a pod of this
// node.
func (a *Agent) ServePortForward(w http.ResponseWriter, r *http.Request, namespace, name string) {
	pod, path, err := a.podNetNS(namespace, name)
	if err != nil {
		writeNodeAPIError(w, err)
		return
	}
	o := portforward.Options{Pod: namespace + "/" + name, UID: string(pod.UID), Log: a.log.With("component", "portforward")}
	if err := portforward.Serve(w, r, DialInNetNS(path), o); err != nil {
		a.log.Debug("node API: port-forward upgrade failed", "pod", o.Pod, "err", err)
	}
}

// DialInNetNS dials localhost:port inside the network namespace at path.
func DialInNetNS(path string) portforward.DialFunc {
	return func(ctx context.Context, port uint16) (net.Conn, error) {
		var c net.Conn
		var err4, err6 error
		err := netns.Do(path, func() error {
			var d net.Dialer
			c, err4 = d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
			if err4 == nil {
				return nil
			}
			c, err6 = d.DialContext(ctx, "tcp6", net.JoinHostPort("::1", strconv.Itoa(int(port))))
			return nil
		})
		switch {
		case err != nil:
			return nil, fmt.Errorf("failed to enter the pod's network namespace: %w", err)
		case err4 == nil || err6 == nil:
			return c, nil
		}
		return nil, fmt.Errorf("failed to connect to localhost:%d inside the pod's network namespace, IPv4: %w, IPv6: %w", port, err4, err6)
	}
}
