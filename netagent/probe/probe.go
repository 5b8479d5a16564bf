package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Result is the outcome of a check or the thresholded state of a probe.
type Result int

// Results.
const (
	Unknown Result = iota
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "Unknown"
}

// Kind is which probe of a container it is.
type Kind string

// Kinds.
const (
	Readiness Kind = "Readiness"
	Liveness  Kind = "Liveness"
	Startup   Kind = "Startup"
)

// Execer runs a command in a container; the runtime satisfies it.
type Execer interface {
	Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (exitCode int, output []byte, err error)
}

// DialFunc opens a connection (net.Dialer.DialContext's shape).
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Target is the container a probe checks.
type Target struct {
	PodIP       netip.Addr
	ContainerID string
	// Ports are the container's ports, for named probe ports.
	Ports []api.ContainerPort
}

// Prober runs single checks.
type Prober struct {
	// Dial opens httpGet and tcpSocket connections; nil uses a plain
	// net.Dialer in the current network namespace.
	Dial DialFunc
	// Exec runs exec checks; nil fails them.
	Exec Execer
}

// UserAgent is sent with httpGet checks.
const UserAgent = "kube-probe/skiff"

// maxBody is how much of an httpGet answer is read (for the message).
const maxBody = 10 << 10

// Probe runs one check of spec against t and returns its result and a
// message (the failure reason, or the exec output).
func (p *Prober) Probe(ctx context.Context, spec *api.Probe, t Target) (Result, string) {
	timeout := SettingsOf(spec).Timeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case spec.Exec != nil:
		return p.exec(ctx, spec.Exec, t, timeout)
	case spec.HTTPGet != nil:
		return p.httpGet(ctx, spec.HTTPGet, t)
	case spec.TCPSocket != nil:
		return p.tcp(ctx, spec.TCPSocket, t)
	case spec.GRPC != nil:
		return Failure, "grpc probes are not supported by skiff"
	}
	return Failure, "probe has no handler"
}

func (p *Prober) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (p *Prober) exec(ctx context.Context, a *api.ExecAction, t Target, timeout time.Duration) (Result, string) {
	if p.Exec == nil {
		return Failure, "exec probes need a runtime"
	}
	if len(a.Command) == 0 {
		return Failure, "exec probe has no command"
	}
	code, out, err := p.Exec.Exec(ctx, t.ContainerID, a.Command, timeout)
	msg := strings.TrimSpace(string(out))
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Failure, fmt.Sprintf("command timed out after %v", timeout)
	case err != nil:
		return Failure, fmt.Sprintf("exec failed: %v", err)
	case code != 0:
		return Failure, fmt.Sprintf("command exited with %d: %s", code, msg)
	}
	return Success, msg
}

// port resolves a probe port against the container's ports.
func port(v api.IntOrString, ports []api.ContainerPort) (int, error) {
	if v.Type == api.Int {
		if v.IntVal < 1 || v.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port %d", v.IntVal)
		}
		return int(v.IntVal), nil
	}
	for _, p := range ports {
		if p.Name == v.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(v.StrVal); err == nil && n > 0 && n < 65536 {
		return n, nil
	}
	return 0, fmt.Errorf("no container port named %q", v.StrVal)
}

func host(h string, t Target) (string, error) {
	if h != "" {
		return h, nil
	}
	if !t.PodIP.IsValid() {
		return "", errors.New("the pod has no IP yet")
	}
	return t.PodIP.String(), nil
}

func (p *Prober) tcp(ctx context.Context, a *api.TCPSocketAction, t Target) (Result, string) {
	n, err := port(a.Port, t.Ports)
	if err != nil {
		return Failure, err.Error()
	}
	h, err := host(a.Host, t)
	if err != nil {
		return Failure, err.Error()
	}
	c, err := p.dial(ctx, "tcp", net.JoinHostPort(h, strconv.Itoa(n)))
	if err != nil {
		return Failure, fmt.Sprintf("dial tcp %s: %v", net.JoinHostPort(h, strconv.Itoa(n)), unwrapOp(err))
	}
	c.Close()
	return Success, ""
}

func (p *Prober) httpGet(ctx context.Context, a *api.HTTPGetAction, t Target) (Result, string) {
	n, err := port(a.Port, t.Ports)
	if err != nil {
		return Failure, err.Error()
	}
	h, err := host(a.Host, t)
	if err != nil {
		return Failure, err.Error()
	}
	scheme := "http"
	if strings.EqualFold(a.Scheme, api.URISchemeHTTPS) {
		scheme = "https"
	}
	path := a.Path
	if path == "" {
		path = "/"
	} else if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u, err := url.Parse(scheme + "://" + net.JoinHostPort(h, strconv.Itoa(n)) + path)
	if err != nil {
		return Failure, fmt.Sprintf("bad probe URL: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Failure, err.Error()
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "*/*")
	for _, hd := range a.HTTPHeaders {
		if strings.EqualFold(hd.Name, "Host") {
			req.Host = hd.Value
			continue
		}
		req.Header.Add(hd.Name, hd.Value)
	}
	resp, err := p.roundTrip(ctx, req)
	if err != nil {
		return Failure, fmt.Sprintf("Get %q: %v", u.String(), unwrapOp(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return Success, ""
	}
	return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

// roundTrip sends req on a connection of its own and reads the answer's
// head: what an http.Transport with keep-alives off does for one request,
// without its connection machinery (two goroutines and 8 KiB of buffers
// per connection; a node probing 100 pods a second made a lot of garbage).
// The connection closes with the body (Response.Body of ReadResponse
// reads from it; the wrapper closes it). Like the kubelet's prober: no
// proxy, no compression, redirects not followed, TLS not verified.
func (p *Prober) roundTrip(ctx context.Context, req *http.Request) (*http.Response, error) {
	raw, err := p.dial(ctx, "tcp", req.URL.Host)
	if err != nil {
		return nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(d)
	}
	// An ended ctx (the agent stopping) ends the check at once.
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Unix(1, 0)) })
	var c net.Conn = &stopConn{Conn: raw, stop: stop}
	if req.URL.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true, ServerName: req.URL.Hostname()}) //nolint:gosec // probes do not verify, as the kubelet
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	req.Close = true // Connection: close
	bw := bufio.NewWriterSize(c, 512)
	err = req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 1024), req)
	if err != nil {
		c.Close()
		return nil, err
	}
	resp.Body = &closeBoth{ReadCloser: resp.Body, conn: c}
	return resp, nil
}

// stopConn is a connection whose Close also drops its context hook.
type stopConn struct {
	net.Conn
	stop func() bool
}

func (c *stopConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// closeBoth closes a response body and its connection.
type closeBoth struct {
	io.ReadCloser
	conn net.Conn
}

func (c *closeBoth) Close() error {
	err := c.ReadCloser.Close()
	c.conn.Close()
	return err
}

func unwrapOp(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// Settings are a probe's timing fields with the defaults applied.
type Settings struct {
	InitialDelay     time.Duration
	Period           time.Duration
	Timeout          time.Duration
	SuccessThreshold int
	FailureThreshold int
}

// SettingsOf applies Kubernetes' defaults to spec's timing fields.
func SettingsOf(spec *api.Probe) Settings {
	s := Settings{
		InitialDelay:     time.Duration(max(spec.InitialDelaySeconds, 0)) * time.Second,
		Period:           10 * time.Second,
		Timeout:          time.Second,
		SuccessThreshold: 1,
		FailureThreshold: 3,
	}
	if spec.PeriodSeconds > 0 {
		s.Period = time.Duration(spec.PeriodSeconds) * time.Second
	}
	if spec.TimeoutSeconds > 0 {
		s.Timeout = time.Duration(spec.TimeoutSeconds) * time.Second
	}
	if spec.SuccessThreshold > 0 {
		s.SuccessThreshold = int(spec.SuccessThreshold)
	}
	if spec.FailureThreshold > 0 {
		s.FailureThreshold = int(spec.FailureThreshold)
	}
	return s
}
