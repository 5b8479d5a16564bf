package netagent

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver/pki"
	"github.com/skiff-dev/skiff/internal/ratelog"
)

// The node API is the agent's small HTTPS API for the server (as the
// kubelet's port 10250): container logs and `skiff trace`.
//
// # Authentication, both ways
//
//   - The agent serves with a self-signed certificate made at each start
//     and publishes its SHA-256 (of the DER) on its Node, annotation
//     AnnotationNodeAPICert, next to the URL (AnnotationNodeAPI) and the
//     port (status.daemonEndpoints.kubeletEndpoint.Port). Only the node
//     itself (and an admin) may write its Node, so the server pins what the
//     authenticated node published.
//   - The agent accepts only a TLS client certificate signed by the
//     cluster CA (the CA it verifies the server with, Config.CAPEM), with
//     ExtKeyUsage ClientAuth and common name NodeAPIClientName. The server
//     issues that certificate in memory from its CA key (pki.ClientCert);
//     no node holds a CA-signed client certificate (node credentials are
//     bearer tokens), so no node can call another node's API.
const (
	// AnnotationNodeAPI is the node API's URL (https://host:port).
	AnnotationNodeAPI = "skiff.dev/node-api"
	// AnnotationNodeAPICert is the hex SHA-256 of the node API's serving
	// certificate (DER).
	AnnotationNodeAPICert = "skiff.dev/node-api-cert-sha256"
	// NodeAPIClientName is the common name of the only client certificate
	// the node API accepts.
	NodeAPIClientName = "skiff-apiserver-node-client"
	// DefaultNodeAPIListen is `skiff agent`'s --node-api-listen.
	DefaultNodeAPIListen = ":10250"
)

// NodeAPIError is an error of the node API with its HTTP status; the
// server maps it to its own API status.
type NodeAPIError struct {
	Code    int
	Message string
}

func (e *NodeAPIError) Error() string { return e.Message }

func nodeAPIErrorf(code int, format string, args ...any) error {
	return &NodeAPIError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// LogOptions select a container's log (the pods/log query).
type LogOptions struct {
	Container string
	Follow    bool
	Previous  bool
	// TailLines, when >= 0, keeps only the last lines (-1: all).
	TailLines int
	// LimitBytes, when > 0, stops after that many bytes.
	LimitBytes int64
}

// ParseLogOptions reads the pods/log query (container, follow, previous,
// tailLines, limitBytes).
func ParseLogOptions(q url.Values) (LogOptions, error) {
	o := LogOptions{Container: q.Get("container"), TailLines: -1}
	var err error
	b := func(name string) bool {
		v := q.Get(name)
		if v == "" {
			return false
		}
		x, e := strconv.ParseBool(v)
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %q is not a boolean", name, v)
		}
		return x
	}
	o.Follow, o.Previous = b("follow"), b("previous")
	if v := q.Get("tailLines"); v != "" {
		n, e := strconv.Atoi(v)
		if e != nil || n < 0 {
			return o, fmt.Errorf("tailLines: %q is not a non-negative integer", v)
		}
		o.TailLines = n
	}
	if v := q.Get("limitBytes"); v != "" {
		n, e := strconv.ParseInt(v, 10, 64)
		if e != nil || n <= 0 {
			return o, fmt.Errorf("limitBytes: %q is not a positive integer", v)
		}
		o.LimitBytes = n
	}
	return o, err
}

// Query is the inverse of ParseLogOptions.
func (o LogOptions) Query() url.Values {
	q := url.Values{}
	if o.Container != "" {
		q.Set("container", o.Container)
	}
	if o.Follow {
		q.Set("follow", "true")
	}
	if o.Previous {
		q.Set("previous", "true")
	}
	if o.TailLines >= 0 {
		q.Set("tailLines", strconv.Itoa(o.TailLines))
	}
	if o.LimitBytes > 0 {
		q.Set("limitBytes", strconv.FormatInt(o.LimitBytes, 10))
	}
	return q
}

// nodeAPI is the running listener.
type nodeAPI struct {
	ln   net.Listener
	srv  *http.Server
	url  string
	cert string // hex SHA-256 of the serving certificate
	port int32
}

// startNodeAPI listens on Config.NodeAPIListen (in the agent's own
// netns) and serves until ctx ends. A nil result (and nil error) means
// the node API is off.
func (a *Agent) startNodeAPI(ctx context.Context, wg *sync.WaitGroup) (*nodeAPI, error) {
	if a.cfg.NodeAPIListen == "" {
		return nil, nil
	}
	if len(a.cfg.CAPEM) == 0 {
		a.log.Warn("node API off: it authenticates the server by the cluster CA, and the agent was given none")
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(a.cfg.CAPEM) {
		return nil, errors.New("netagent: node API: the server CA holds no PEM certificate")
	}
	cert, sum, err := selfSignedCert(a.cfg.NodeName, a.cfg.NodeIPs)
	if err != nil {
		return nil, fmt.Errorf("netagent: node API: %w", err)
	}
	tlsCfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: pki.CipherSuites(),
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		NextProtos:   []string{"h2", "http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].Subject.CommonName != NodeAPIClientName {
				return fmt.Errorf("node API: only the server's client certificate (CN %s) is accepted", NodeAPIClientName)
			}
			return nil
		},
	}
	ln, err := net.Listen("tcp", a.cfg.NodeAPIListen)
	if err != nil {
		return nil, fmt.Errorf("netagent: node API: listen %s: %w (another agent on this machine? give each agent its own --node-api-listen, or \"\" to turn the node API off)", a.cfg.NodeAPIListen, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	u := a.cfg.NodeAPIURL
	if u == "" {
		host, _, _ := net.SplitHostPort(a.cfg.NodeAPIListen)
		if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
			host = ""
			if len(a.cfg.NodeIPs) > 0 {
				host = a.cfg.NodeIPs[0].String()
			} else {
				host = "127.0.0.1"
			}
		}
		u = "https://" + net.JoinHostPort(host, strconv.Itoa(port))
	}
	n := &nodeAPI{ln: ln, url: u, cert: sum, port: int32(port)}
	n.srv = &http.Server{
		Handler:           a.nodeAPIHandler(),
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: 10 * time.Second,
		// Handshake and connection errors at Warn, a few a second.
		ErrorLog: ratelog.HTTPErrorLog(slog.New(ratelog.New(a.log.Handler(), ratelog.Options{})), slog.LevelWarn, "node API: "),
	}
	serveUntilDone(ctx, wg, a.log, "node API", n.srv, tls.NewListener(ln, tlsCfg))
	a.log.Info("node API listening", "addr", ln.Addr().String(), "url", u)
	return n, nil
}

// NodeAPIURL is the published URL of the node API ("" when it is off).
func (a *Agent) NodeAPIURL() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.napi == nil {
		return ""
	}
	return a.napi.url
}

// selfSignedCert makes the node API's serving certificate (ECDSA P-256,
// valid a year) and returns it with the hex SHA-256 of its DER.
func selfSignedCert(node string, ips []netip.Addr) (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "skiff-node-api@" + node},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{node, "localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip.AsSlice())
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	sum := sha256.Sum256(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, hex.EncodeToString(sum[:]), nil
}

// nodeAPIHandler routes the node API.
//
//	GET /healthz
//	GET /metrics/resource   (resourcemetrics.go)
//	GET /containerLogs/{namespace}/{pod}[/{container}]?follow=&previous=&tailLines=&limitBytes=
//	GET /trace?namespace=&pod=&url=
//	GET|POST /exec/{namespace}/{pod}/{container}?command=&stdin=&stdout=&stderr=&tty=   (upgrade)
//	GET|POST /attach/{namespace}/{pod}/{container}?stdin=&stdout=&stderr=&tty=          (upgrade)
//	GET|POST /portforward/{namespace}/{pod}?ports=                                      (upgrade)
func (a *Agent) nodeAPIHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("GET /metrics/resource", a.serveResourceMetrics)
	logs := func(w http.ResponseWriter, r *http.Request) {
		o, err := ParseLogOptions(r.URL.Query())
		if err != nil {
			writeNodeAPIError(w, &NodeAPIError{Code: http.StatusBadRequest, Message: err.Error()})
			return
		}
		if c := r.PathValue("container"); c != "" {
			o.Container = c
		}
		fw := &headerWriter{w: w}
		if err := a.ContainerLogs(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), o, fw); err != nil {
			if !fw.started {
				writeNodeAPIError(w, err)
				return
			}
			a.log.Debug("node API: log stream ended", "err", err)
		}
		if !fw.started { // an empty log
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusOK)
		}
	}
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}", logs)
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", logs)
	mux.HandleFunc("GET /trace", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		tr, err := a.Trace(r.Context(), q.Get("namespace"), q.Get("pod"), q.Get("url"))
		if err != nil {
			writeNodeAPIError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(tr)
	})
	a.streamRoutes(mux)
	return mux
}

// ServeNodeAPI serves one node API request in-process: the built-in
// agent's server hands it pods/exec, attach and portforward on the
// client's own request, so that the handler takes the client's
// connection over directly.
func (a *Agent) ServeNodeAPI(w http.ResponseWriter, r *http.Request) {
	a.nodeAPIHandler().ServeHTTP(w, r)
}

// headerWriter sends the 200 header at the first byte and flushes every
// write (a followed log is read as it comes).
type headerWriter struct {
	w       http.ResponseWriter
	started bool
}

func (h *headerWriter) Write(p []byte) (int, error) {
	if !h.started {
		h.started = true
		h.w.Header().Set("Content-Type", "text/plain")
		h.w.WriteHeader(http.StatusOK)
	}
	n, err := h.w.Write(p)
	if f, ok := h.w.(http.Flusher); ok {
		f.Flush()
	}
	return n, err
}

func writeNodeAPIError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var ne *NodeAPIError
	if errors.As(err, &ne) {
		code = ne.Code
	}
	st := api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure",
		Message: err.Error(), Code: int32(code)}
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// ContainerLogs writes the log of one container of a pod this node runs
// to w (in-process callers, such as the built-in agent's server, use it
// directly; the node API serves it). Without o.Container a pod with one
// container gives that one.
func (a *Agent) ContainerLogs(ctx context.Context, namespace, name string, o LogOptions, w io.Writer) error {
	a.mu.Lock()
	pm := a.pm
	a.mu.Unlock()
	if pm == nil {
		return nodeAPIErrorf(http.StatusServiceUnavailable, "node %s is not ready yet", a.cfg.NodeName)
	}
	obj, ok := pm.pods.Get(namespace, name)
	pod, _ := obj.(*api.Pod)
	if !ok || pod == nil {
		return nodeAPIErrorf(http.StatusNotFound, "pod %s/%s is not on node %s", namespace, name, a.cfg.NodeName)
	}
	cname := o.Container
	if cname == "" {
		if len(pod.Spec.Containers) != 1 {
			names := make([]string, 0, len(pod.Spec.Containers))
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
			return nodeAPIErrorf(http.StatusBadRequest, "a container name must be specified for pod %s, choose one of: %v", name, names)
		}
		cname = pod.Spec.Containers[0].Name
	}
	var id string
	found := false
	for _, cs := range append(append([]api.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if cs.Name != cname {
			continue
		}
		found = true
		if o.Previous {
			if t := cs.LastState.Terminated; t != nil {
				id = t.ContainerID
			}
		} else {
			id = cs.ContainerID
		}
	}
	switch {
	case !found && !podHasContainer(pod, cname):
		return nodeAPIErrorf(http.StatusBadRequest, "container %s is not valid for pod %s", cname, name)
	case id == "" && o.Previous:
		return nodeAPIErrorf(http.StatusBadRequest, "previous terminated container %q in pod %q not found", cname, name)
	case id == "":
		return nodeAPIErrorf(http.StatusBadRequest, "container %q in pod %q is waiting to start", cname, name)
	}
	if _, rest, ok := strings.Cut(id, "://"); ok {
		id = rest
	}
	if o.LimitBytes > 0 {
		w = &limitWriter{w: w, left: o.LimitBytes}
	}
	err := a.tailLogs(ctx, pm, id, o, w)
	if errors.Is(err, errLimitReached) {
		return nil
	}
	if err != nil && o.Previous {
		return nodeAPIErrorf(http.StatusBadRequest, "previous terminated container %q in pod %q not found: the agent removes a container when it restarts it, with its log (%v)", cname, name, err)
	}
	if err != nil {
		return nodeAPIErrorf(http.StatusNotFound, "logs of container %q in pod %s/%s: %v", cname, namespace, name, err)
	}
	return nil
}

func podHasContainer(pod *api.Pod, name string) bool {
	for _, c := range append(append([]api.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.Name == name {
			return true
		}
	}
	return false
}

// tailLogs copies the runtime's log, keeping only the last TailLines
// lines of what is there when it starts (then, with Follow, what comes).
func (a *Agent) tailLogs(ctx context.Context, pm *podManager, id string, o LogOptions, w io.Writer) error {
	if o.TailLines < 0 {
		return pm.rt.Logs(ctx, id, o.Follow, w)
	}
	var buf bytes.Buffer
	if err := pm.rt.Logs(ctx, id, false, &buf); err != nil {
		return err
	}
	seen := int64(buf.Len())
	if _, err := w.Write(lastLines(buf.Bytes(), o.TailLines)); err != nil {
		return err
	}
	if !o.Follow {
		return nil
	}
	return pm.rt.Logs(ctx, id, true, &skipWriter{w: w, skip: seen})
}

// lastLines returns the last n lines of b (a last line without a newline
// counts).
func lastLines(b []byte, n int) []byte {
	if n == 0 {
		return nil
	}
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n--
			if n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}

// skipWriter drops the first skip bytes.
type skipWriter struct {
	w    io.Writer
	skip int64
}

func (s *skipWriter) Write(p []byte) (int, error) {
	n := len(p)
	if s.skip >= int64(n) {
		s.skip -= int64(n)
		return n, nil
	}
	p = p[s.skip:]
	s.skip = 0
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

var errLimitReached = errors.New("limitBytes reached")

type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errLimitReached
	}
	cut := false
	if int64(len(p)) > l.left {
		p, cut = p[:l.left], true
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	if err == nil && cut {
		err = errLimitReached
	}
	return n, err
}
