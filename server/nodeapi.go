package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/apiserver/pki"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/store"
)

// nodeAPI reaches the node agents' node API (netagent/nodeapi.go) for
// pod logs and traces: the built-in agent in-process, the others over
// HTTPS with the server's client certificate (issued in memory from the
// cluster CA, CN netagent.NodeAPIClientName), pinning the serving
// certificate each node published on its Node (AnnotationNodeAPICert).
//
// # Where it dials
//
// A node writes its own Node, so the URL it publishes
// (AnnotationNodeAPI) is not trusted as a destination: the server dials
// only the address the node's latest join came from (nodeTokens
// records it; the node cannot state it), on the port of the published
// URL (10250 when it names none). The port is the node's choice because
// several agents may share a machine, each on its own
// --node-api-listen; the host is always the node's own machine as the
// server saw it, so a node can make the server connect only to a port
// of the machine it runs on, which it can reach itself. A node without
// a recorded join (a Node an admin created) has no node API. Failures
// to reach or authenticate the node API answer the client a generic 503
// and are logged (Warn) with the detail.
type nodeAPI struct {
	st      store.Interface
	pods    *api.ResourceInfo
	nodes   *api.ResourceInfo
	cert    tls.Certificate
	addrs   joinAddresses
	log     *slog.Logger
	builtin atomic.Pointer[netagent.Agent]

	mu     sync.Mutex
	byCert map[string]*http.Client // pinned SHA-256 -> client
}

// joinAddresses tells where each node joined from (nodeTokens).
type joinAddresses interface {
	joinAddress(node string) (netip.Addr, bool)
}

func newNodeAPI(st store.Interface, res []*api.ResourceInfo, cert tls.Certificate, addrs joinAddresses, log *slog.Logger) *nodeAPI {
	t := resourceTable(res)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &nodeAPI{st: st, pods: t["pods"], nodes: t["nodes"], cert: cert, addrs: addrs, log: log, byCert: map[string]*http.Client{}}
}

// agentEndpoint is how to reach the agent of one node.
type agentEndpoint struct {
	local *netagent.Agent // the built-in agent
	node  string
	url   string
	pin   string // hex SHA-256 of the node API's certificate
	http  *http.Client
	log   *slog.Logger
}

// defaultNodeAPIPort is the port dialled when the published URL names none.
const defaultNodeAPIPort = "10250"

// nodeAPIPort is the port of a published node API URL.
func nodeAPIPort(published string) (string, error) {
	u, err := url.Parse(published)
	if err != nil {
		return "", err
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q is not https", u.Scheme)
	}
	p := u.Port()
	if p == "" {
		return defaultNodeAPIPort, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("port %q is not a port", p)
	}
	return p, nil
}

// unreachable is the answer when the node API of node cannot be used; the
// detail goes to the log only.
func unreachable(node string) error {
	return apiserver.NewStatus(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable,
		fmt.Sprintf("the node API of node %q could not be reached (the server log has the detail)", node))
}

// podNode returns the node a pod runs on and how to reach its agent.
func (n *nodeAPI) podNode(ctx context.Context, ns, name string) (string, agentEndpoint, error) {
	pod, err := n.pod(ctx, ns, name)
	if err != nil {
		return "", agentEndpoint{}, err
	}
	return n.endpoint(ctx, pod)
}

// pod reads one pod.
func (n *nodeAPI) pod(ctx context.Context, ns, name string) (*api.Pod, error) {
	kv, err := n.st.Get(ctx, apiserver.KeyFor(n.pods, ns, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, apiserver.NewNotFound("pods", name)
	}
	if err != nil {
		return nil, err
	}
	var pod api.Pod
	if err := json.Unmarshal(kv.Value, &pod); err != nil {
		return nil, fmt.Errorf("server: decode pod %s/%s: %w", ns, name, err)
	}
	return &pod, nil
}

// endpoint returns the node pod runs on and how to reach its agent.
func (n *nodeAPI) endpoint(ctx context.Context, pod *api.Pod) (string, agentEndpoint, error) {
	ns, name := pod.Namespace, pod.Name
	node := pod.Spec.NodeName
	if node == "" {
		return "", agentEndpoint{}, apiserver.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", name))
	}
	ep, err := n.nodeEndpoint(ctx, node, fmt.Sprintf(" of pod %s/%s", ns, name))
	if err != nil {
		return "", agentEndpoint{}, err
	}
	return node, ep, nil
}

// nodeEndpoint returns how to reach the agent of node; of ends the
// message of a node that does not exist (" of pod ns/name").
func (n *nodeAPI) nodeEndpoint(ctx context.Context, node, of string) (agentEndpoint, error) {
	if a := n.builtin.Load(); a != nil && a.NodeName() == node {
		return agentEndpoint{local: a}, nil
	}
	kv, err := n.st.Get(ctx, apiserver.KeyFor(n.nodes, "", node))
	if errors.Is(err, store.ErrNotFound) {
		return agentEndpoint{}, apiserver.NewStatus(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable,
			fmt.Sprintf("node %q%s does not exist", node, of))
	}
	if err != nil {
		return agentEndpoint{}, err
	}
	var nd api.Node
	if err := json.Unmarshal(kv.Value, &nd); err != nil {
		return agentEndpoint{}, fmt.Errorf("server: decode node %s: %w", node, err)
	}
	u, sum := nd.Annotations[netagent.AnnotationNodeAPI], nd.Annotations[netagent.AnnotationNodeAPICert]
	if u == "" || sum == "" {
		return agentEndpoint{}, apiserver.NewStatus(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable,
			fmt.Sprintf("node %q publishes no node API (its agent runs without --node-api-listen or without --server-ca)", node))
	}
	var addr netip.Addr
	found := false
	if n.addrs != nil {
		addr, found = n.addrs.joinAddress(node)
	}
	if !found {
		return agentEndpoint{}, apiserver.NewStatus(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable,
			fmt.Sprintf("node %q has not joined this server, so the server knows no address of its node API", node))
	}
	port, err := nodeAPIPort(u)
	if err != nil {
		n.log.Warn("node API: the published URL is unusable", "node", node, "url", u, "err", err)
		return agentEndpoint{}, unreachable(node)
	}
	target := "https://" + net.JoinHostPort(addr.Unmap().String(), port)
	return agentEndpoint{node: node, url: target, pin: sum, http: n.client(sum), log: n.log}, nil
}

// client is the HTTPS client that accepts only the certificate whose
// SHA-256 is sum.
func (n *nodeAPI) client(sum string) *http.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c, ok := n.byCert[sum]; ok {
		return c
	}
	c := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     n.tlsConfig(sum),
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
	}}
	if len(n.byCert) > 1024 { // nodes re-publish a new certificate at each start
		clear(n.byCert)
	}
	n.byCert[sum] = c
	return c
}

// tlsConfig is the client TLS configuration that presents the server's
// client certificate and accepts only the certificate whose SHA-256 is
// sum.
func (n *nodeAPI) tlsConfig(sum string) *tls.Config {
	want, _ := hex.DecodeString(sum)
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: pki.CipherSuites(),
		Certificates: []tls.Certificate{n.cert},
		// The chain is not verified against a CA: the certificate is
		// self-signed and pinned by its hash (VerifyConnection).
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("node API: no certificate")
			}
			got := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if len(want) != len(got) || subtle.ConstantTimeCompare(got[:], want) != 1 {
				return errors.New("node API: the certificate is not the one the node published")
			}
			return nil
		},
	}
}

// get calls the node API and returns the response of a 200, or the error
// it answered, as an API status.
func (e agentEndpoint) get(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, apiserver.NewInternal(err)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("node API unreachable", "node", e.node, "url", e.url, "err", err)
		}
		return nil, unreachable(e.node)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var st api.Status
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		msg = st.Message
	}
	return nil, statusFor(&netagent.NodeAPIError{Code: resp.StatusCode, Message: msg})
}

// statusFor maps a node API error to an API status.
func statusFor(err error) error {
	var ne *netagent.NodeAPIError
	if !errors.As(err, &ne) {
		return err
	}
	reason := api.StatusReasonInternalError
	switch ne.Code {
	case http.StatusBadRequest:
		reason = api.StatusReasonBadRequest
	case http.StatusNotFound:
		reason = api.StatusReasonNotFound
	case http.StatusServiceUnavailable:
		reason = api.StatusReasonServiceUnavailable
	case http.StatusUnauthorized, http.StatusForbidden:
		// The node refused the server's certificate: a server problem.
		return apiserver.NewStatus(http.StatusInternalServerError, api.StatusReasonInternalError, "the node API refused the server: "+ne.Message)
	}
	return apiserver.NewStatus(ne.Code, reason, ne.Message)
}

// PodLogs is apiserver.Config.PodLogs.
func (n *nodeAPI) PodLogs(ctx context.Context, ns, name string, q url.Values) (io.ReadCloser, error) {
	o, err := netagent.ParseLogOptions(q)
	if err != nil {
		return nil, apiserver.NewBadRequest(err.Error())
	}
	_, ep, err := n.podNode(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	if ep.local != nil {
		return localLogs(ctx, ep.local, ns, name, o)
	}
	resp, err := ep.get(ctx, "/containerLogs/"+url.PathEscape(ns)+"/"+url.PathEscape(name), o.Query())
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// localLogs streams the built-in agent's ContainerLogs through a pipe; an
// error before the first byte is returned as the API's answer.
func localLogs(ctx context.Context, a *netagent.Agent, ns, name string, o netagent.LogOptions) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	fw := &firstWrite{w: pw, started: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		err := a.ContainerLogs(ctx, ns, name, o, fw)
		done <- err
		pw.CloseWithError(err)
	}()
	select {
	case <-fw.started:
		return &cancelReader{ReadCloser: pr, cancel: cancel}, nil
	case err := <-done:
		if err != nil {
			cancel()
			return nil, statusFor(err)
		}
		return &cancelReader{ReadCloser: pr, cancel: cancel}, nil
	}
}

type firstWrite struct {
	w       io.Writer
	once    sync.Once
	started chan struct{}
}

func (f *firstWrite) Write(p []byte) (int, error) {
	f.once.Do(func() { close(f.started) })
	return f.w.Write(p)
}

type cancelReader struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelReader) Close() error {
	c.cancel()
	return c.ReadCloser.Close()
}

// traceTimeout bounds a trace (DNS queries, iptables-save, conntrack dump
// on the node).
const traceTimeout = 30 * time.Second

// Trace asks the agent of the pod's node for the trace of rawURL.
func (n *nodeAPI) Trace(ctx context.Context, ns, name, rawURL string) (*api.Trace, error) {
	ctx, cancel := context.WithTimeout(ctx, traceTimeout)
	defer cancel()
	_, ep, err := n.podNode(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	if ep.local != nil {
		tr, err := ep.local.Trace(ctx, ns, name, rawURL)
		if err != nil {
			return nil, statusFor(err)
		}
		return tr, nil
	}
	resp, err := ep.get(ctx, "/trace", url.Values{"namespace": {ns}, "pod": {name}, "url": {rawURL}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var tr api.Trace
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&tr); err != nil {
		n.log.Warn("node API: undecodable trace", "node", ep.node, "url", ep.url, "err", err)
		return nil, apiserver.NewInternal(fmt.Errorf("the trace from node %q is undecodable", ep.node))
	}
	return &tr, nil
}

// traceHandler serves GET /skiff/v1/namespaces/{ns}/pods/{name}/trace?url=
// outside the resource API: admins and the read-only (dashboard) token
// may call it, nodes and the join token may not.
type traceHandler struct {
	auth *tokenAuth
	api  *nodeAPI
}

const tracePathPrefix = "/skiff/v1/namespaces/"

// tracePath splits /skiff/v1/namespaces/{ns}/pods/{name}/trace.
func tracePath(p string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(p, tracePathPrefix)
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 4 || parts[1] != "pods" || parts[3] != "trace" || parts[0] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0], parts[2], true
}

func (h *traceHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ns, name, ok := tracePath(r.URL.Path)
	if !ok {
		writeStatus(w, http.StatusNotFound, api.StatusReasonNotFound, "the server could not find the requested resource")
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeStatus(w, http.StatusMethodNotAllowed, api.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource")
		return
	}
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	u, ok := h.auth.Authenticate(r.Context(), strings.TrimSpace(tok))
	if !strings.EqualFold(scheme, "Bearer") || !ok {
		writeStatus(w, http.StatusUnauthorized, api.StatusReasonUnauthorized, "Unauthorized")
		return
	}
	allowed := false
	for _, g := range u.Groups {
		allowed = allowed || g == groupMasters || g == groupReadOnly
	}
	if !allowed {
		writeStatus(w, http.StatusForbidden, api.StatusReasonForbidden,
			fmt.Sprintf("User %q cannot get pods/trace (%s/%s): only admins and the dashboard may trace", u.Name, ns, name))
		return
	}
	target := r.URL.Query().Get("url")
	if target == "" {
		writeStatus(w, http.StatusBadRequest, api.StatusReasonBadRequest, "the url parameter is required (…/trace?url=http://svc:80)")
		return
	}
	tr, err := h.api.Trace(r.Context(), ns, name, target)
	if err != nil {
		var se *apiserver.StatusError
		if errors.As(err, &se) {
			st := se.Status()
			writeStatus(w, int(st.Code), st.Reason, st.Message)
			return
		}
		writeStatus(w, http.StatusInternalServerError, api.StatusReasonInternalError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(tr)
}

// withTrace routes the trace endpoint to h and everything else to next.
func withTrace(h *traceHandler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, tracePathPrefix) && strings.HasSuffix(r.URL.Path, "/trace") {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
