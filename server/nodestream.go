package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/netagent"
)

// PodStream is apiserver.Config.PodStream: pods/exec, pods/attach and
// pods/portforward, as kube-apiserver serves them (its
// UpgradeAwareHandler with UpgradeRequired): the request must be an
// HTTP/1.1 upgrade (WebSocket or SPDY, GET or POST; else 400 "Upgrade
// request required"); exec and attach name a container of the pod (the
// only one when the query names none; else 400, in upstream's words); the
// request goes, its query kept, to the node API path /exec/{ns}/{pod}/{c},
// /attach/{ns}/{pod}/{c} or /portforward/{ns}/{pod} of the pod's node. The
// built-in agent serves it in-process on this very request (its handler
// hijacks the client's connection); a remote node is reached over the
// pinned HTTPS of the node API, HTTP/1.1, and once it answers 101 the
// bytes are spliced both ways until either side closes, then both are
// closed (httputil.ReverseProxy's upgrade handling). An answer other than
// 101 from the node becomes a Status (statusFor); an unreachable node 503.
func (n *nodeAPI) PodStream(w http.ResponseWriter, r *http.Request, ns, name, sub string) error {
	if !isUpgradeRequest(r) {
		return apiserver.NewBadRequest("Upgrade request required")
	}
	pod, err := n.pod(r.Context(), ns, name)
	if err != nil {
		return err
	}
	path := "/portforward/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
	if sub != "portforward" {
		c, err := streamContainer(pod, r.URL.Query().Get("container"))
		if err != nil {
			return err
		}
		path = "/" + sub + "/" + url.PathEscape(ns) + "/" + url.PathEscape(name) + "/" + url.PathEscape(c)
	}
	_, ep, err := n.endpoint(r.Context(), pod)
	if err != nil {
		return err
	}
	if ep.local != nil {
		r2 := r.Clone(r.Context())
		r2.URL = &url.URL{Path: path, RawQuery: r.URL.RawQuery}
		r2.RequestURI = r2.URL.RequestURI()
		r2.Header.Del("Authorization")
		ep.local.ServeNodeAPI(w, r2)
		return nil
	}
	target, err := url.Parse(ep.url)
	if err != nil {
		return apiserver.NewInternal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: target.Scheme, Host: target.Host, Path: path, RawQuery: r.URL.RawQuery}
			pr.Out.Host = target.Host
			pr.Out.Header.Del("Authorization")
		},
		Transport: n.upgradeTransport(ep.pin),
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusSwitchingProtocols {
				return nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			var st api.Status
			msg := strings.TrimSpace(string(b))
			if json.Unmarshal(b, &st) == nil && st.Message != "" {
				msg = st.Message
			}
			return statusFor(&netagent.NodeAPIError{Code: resp.StatusCode, Message: msg})
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			var se *apiserver.StatusError
			if !errors.As(err, &se) {
				if r.Context().Err() == nil {
					n.log.Warn("node API unreachable", "node", ep.node, "url", ep.url, "err", err)
				}
				se = unreachable(ep.node).(*apiserver.StatusError)
			}
			st := se.Status()
			writeStatus(w, int(st.Code), st.Reason, st.Message)
		},
	}
	rp.ServeHTTP(w, r)
	return nil
}

// isUpgradeRequest: Connection names upgrade and Upgrade is set.
func isUpgradeRequest(r *http.Request) bool {
	if r.Header.Get("Upgrade") == "" {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

// streamContainer is the container an exec or attach goes to, checked as
// kube-apiserver's ExecLocation checks it.
func streamContainer(pod *api.Pod, c string) (string, error) {
	if c == "" {
		if len(pod.Spec.Containers) == 1 {
			return pod.Spec.Containers[0].Name, nil
		}
		var names []string
		for _, c := range pod.Spec.Containers {
			names = append(names, c.Name)
		}
		return "", apiserver.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names))
	}
	for _, x := range append(append([]api.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if x.Name == c {
			return c, nil
		}
	}
	return "", apiserver.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", c, pod.Name))
}

// upgradeTransport is the HTTP/1.1-only transport (an upgrade cannot go
// over HTTP/2) that accepts only the node certificate whose SHA-256 is
// pin. Each proxied upgrade takes its connection over, so none is kept
// idle.
func (n *nodeAPI) upgradeTransport(pin string) *http.Transport {
	tlsCfg := n.tlsConfig(pin)
	tlsCfg.NextProtos = []string{"http/1.1"}
	return &http.Transport{
		TLSClientConfig:     tlsCfg,
		ForceAttemptHTTP2:   false,
		TLSHandshakeTimeout: 10 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		DisableKeepAlives:   true,
	}
}
