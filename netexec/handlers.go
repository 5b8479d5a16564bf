package netexec

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// DialResult is the body /dial answers.
type DialResult struct {
	Responses []string `json:"responses,omitempty"`
	Errors    []string `json:"errors,omitempty"`
}

// maxTries bounds /dial?tries= so one request cannot keep a pod busy for
// hours.
const maxTries = 1000

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.root)
	mux.HandleFunc("/hostname", s.hostname)
	mux.HandleFunc("/hostName", s.hostname)
	mux.HandleFunc("/clientip", s.clientIP)
	mux.HandleFunc("/echo", s.echo)
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/sethealth", s.setHealth)
	mux.HandleFunc("/exit", s.exitHandler)
	mux.HandleFunc("/dial", s.dial)
	return mux
}

func (s *Server) logRequest(r *http.Request) {
	s.log.Info("netexec: request", "method", r.Method, "uri", r.URL.RequestURI(), "from", r.RemoteAddr)
}

func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r)
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	fmt.Fprintf(w, "NOW: %v", time.Now())
}

func (s *Server) hostname(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r)
	fmt.Fprint(w, s.cfg.PodName)
}

func (s *Server) clientIP(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r)
	fmt.Fprint(w, r.RemoteAddr)
}

func (s *Server) echo(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r)
	if c := r.FormValue("code"); c != "" {
		code, err := strconv.Atoi(c)
		if err != nil || code < 100 || code > 599 {
			http.Error(w, fmt.Sprintf("argument 'code' must be an HTTP status (100-599), got %q", c), http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
	}
	fmt.Fprint(w, r.FormValue("msg"))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r)
	code := int(s.health.Load())
	w.WriteHeader(code)
	fmt.Fprint(w, http.StatusText(code))
}

func (s *Server) setHealth(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r)
	v := r.FormValue("status")
	code, err := strconv.Atoi(v)
	if err != nil || code < 100 || code > 599 {
		http.Error(w, fmt.Sprintf("argument 'status' must be an HTTP status (100-599), got %q", v), http.StatusBadRequest)
		return
	}
	s.health.Store(int32(code))
	fmt.Fprintf(w, "/healthz now answers %d", code)
}

func (s *Server) exitHandler(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r)
	code := 0
	if v := r.FormValue("code"); v != "" {
		c, err := strconv.Atoi(v)
		if err != nil || c < 0 || c > 255 {
			http.Error(w, fmt.Sprintf("argument 'code' must be an integer 0-255, got %q", v), http.StatusBadRequest)
			return
		}
		code = c
	}
	fmt.Fprintf(w, "exiting with code %d", code)
	select {
	case s.exit <- code:
	default: // an earlier /exit already won
	}
}

func (s *Server) dial(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r)
	q := r.URL.Query()
	host, port, request := q.Get("host"), q.Get("port"), q.Get("request")
	tries := 1
	if v := q.Get("tries"); v != "" {
		t, err := strconv.Atoi(v)
		if err != nil || t < 0 || t > maxTries {
			http.Error(w, fmt.Sprintf("tries parameter is invalid: must be an integer 0-%d, got %q", maxTries, v), http.StatusBadRequest)
			return
		}
		tries = t
	}
	if request == "" {
		http.Error(w, "request parameter not specified", http.StatusBadRequest)
		return
	}
	var try func(ctx context.Context, addr string) (string, error)
	switch strings.ToLower(q.Get("protocol")) {
	case "", "http":
		try = func(ctx context.Context, addr string) (string, error) { return s.dialHTTP(ctx, addr, request) }
	case "udp":
		try = func(ctx context.Context, addr string) (string, error) { return s.dialUDP(ctx, addr, request) }
	default:
		http.Error(w, fmt.Sprintf("unsupported protocol %q (http or udp)", q.Get("protocol")), http.StatusBadRequest)
		return
	}
	addr, err := s.resolve(r.Context(), host, port)
	if err != nil {
		http.Error(w, fmt.Sprintf("host and/or port param are invalid. %v", err), http.StatusBadRequest)
		return
	}
	var res DialResult
	for range tries {
		resp, err := try(r.Context(), addr)
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
			continue
		}
		res.Responses = append(res.Responses, resp)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// resolve turns host:port into ip:port, resolving host once through the
// configured resolver and preferring an IPv4 address, as
// net.ResolveTCPAddr does for agnhost.
func (s *Server) resolve(ctx context.Context, host, port string) (string, error) {
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return "", fmt.Errorf("port %q is not a port number", port)
	}
	if host == "" {
		return "", fmt.Errorf("host is empty")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(ip, uint16(p)).String(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	ips, err := s.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return "", err
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("no address for %q", host)
	}
	pick := ips[0]
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			pick = ip.Unmap()
			break
		}
	}
	return netip.AddrPortFrom(pick, uint16(p)).String(), nil
}

func (s *Server) dialHTTP(ctx context.Context, addr, request string) (string, error) {
	// A new transport per try without keep-alives: every try is a new
	// connection, so tries through a Service VIP spread over its endpoints.
	tr := &http.Transport{
		DialContext:       (&net.Dialer{Timeout: s.cfg.DialTimeout}).DialContext,
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: s.cfg.DialTimeout}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/"+strings.TrimPrefix(request, "/"), nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	return string(body), nil
}

func (s *Server) dialUDP(ctx context.Context, addr, request string) (string, error) {
	d := net.Dialer{Timeout: s.cfg.DialTimeout}
	conn, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return "", fmt.Errorf("udp dial failed: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Write([]byte(request)); err != nil {
		return "", fmt.Errorf("udp write failed: %w", err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(s.cfg.DialTimeout)); err != nil {
		return "", err
	}
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	if err != nil {
		return "", fmt.Errorf("udp read failed: %w", err)
	}
	if n == 0 {
		return "", fmt.Errorf("udp read failed: empty answer")
	}
	return string(buf[:n]), nil
}

// udpReply answers one UDP command; ok is false for an unknown command.
func (s *Server) udpReply(msg string, from net.Addr) (reply string, ok bool) {
	text := strings.TrimSpace(msg)
	lower := strings.ToLower(text)
	switch {
	case lower == "hostname":
		return s.cfg.PodName, true
	case lower == "clientip":
		return from.String(), true
	case strings.HasPrefix(lower, "echo "):
		return text[len("echo "):], true
	}
	return "", false
}
