package kubectl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// DefaultDataDir is where `skiff server` keeps admin.kubeconfig unless
// --data-dir says otherwise.
const DefaultDataDir = "/var/lib/skiff"

// Env is everything the verbs read and write outside the API: the
// standard streams, the environment ($KUBECONFIG, $EDITOR, ...) and the
// clock. Zero fields get the process's own.
type Env struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Getenv reads an environment variable; nil means os.Getenv.
	Getenv func(string) string
	// Now is the clock ages are computed against; nil means time.Now.
	Now func() time.Time
}

func (e Env) withDefaults() Env {
	if e.In == nil {
		e.In = os.Stdin
	}
	if e.Out == nil {
		e.Out = os.Stdout
	}
	if e.ErrOut == nil {
		e.ErrOut = os.Stderr
	}
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	return e
}

// globals are the connection flags every verb takes.
type globals struct {
	env        Env
	kubeconfig string
	dataDir    string
	namespace  string
}

// addFlags registers the connection flags as persistent flags of a verb,
// so its subcommands (rollout status, create deployment) take them too.
func (g *globals) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&g.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, else <data-dir>/admin.kubeconfig)")
	f.StringVar(&g.dataDir, "data-dir", DefaultDataDir, "the server's data directory, where admin.kubeconfig is read from")
	f.StringVarP(&g.namespace, "namespace", "n", "", "the namespace of this request (default: the kubeconfig context's, else default)")
}

// kubeconfigPath resolves --kubeconfig, then $KUBECONFIG (the first
// existing file of its list), then <data-dir>/admin.kubeconfig.
func (g *globals) kubeconfigPath() string {
	if g.kubeconfig != "" {
		return g.kubeconfig
	}
	if v := g.env.Getenv("KUBECONFIG"); v != "" {
		var first string
		for _, p := range filepath.SplitList(v) {
			if p == "" {
				continue
			}
			if first == "" {
				first = p
			}
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		if first != "" {
			return first
		}
	}
	return filepath.Join(g.dataDir, "admin.kubeconfig")
}

// session is one verb's connection to the API.
type session struct {
	env Env
	c   *client.Client
	raw *rawClient
	// ns is the namespace of the request: -n, else the context's, else
	// "default"; explicitNS records that -n was given.
	ns         string
	explicitNS bool
	resources  []*api.ResourceInfo
	server     string
}

// connect reads the kubeconfig and builds the clients.
func (g *globals) connect(cmd *cobra.Command) (*session, error) {
	path := g.kubeconfigPath()
	cfg, err := client.FromKubeconfig(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no kubeconfig at %s: start `skiff server`, or pass --kubeconfig, $KUBECONFIG or --data-dir", path)
		}
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "client: "))
	}
	hc, err := httpClient(cfg.CAPEM)
	if err != nil {
		return nil, err
	}
	cfg.HTTPClient = hc
	cfg.UserAgent = "skiff-cli"
	c, err := client.New(cfg)
	if err != nil {
		return nil, err
	}
	s := &session{
		env:       g.env,
		c:         c,
		raw:       &rawClient{base: strings.TrimRight(cfg.Server, "/"), token: cfg.Token, hc: hc},
		ns:        "default",
		resources: api.Resources(),
		server:    cfg.Server,
	}
	if cfg.Namespace != "" {
		s.ns = cfg.Namespace
	}
	if cmd.Flags().Changed("namespace") {
		s.ns, s.explicitNS = g.namespace, true
	}
	return s, nil
}

// httpClient trusts caPEM (or the system roots) and has no overall
// timeout: watches and `logs -f` are long-lived.
func httpClient(caPEM []byte) (*http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("the kubeconfig's certificate-authority-data holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tlsCfg,
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
	}}, nil
}

// rawClient sends requests the typed client cannot: other Accept headers
// (Tables) and streamed bodies (logs).
type rawClient struct {
	base  string
	token string
	hc    *http.Client
}

// Accept headers.
const (
	acceptJSON = "application/json"
	// acceptTable asks for a meta.k8s.io/v1 Table and accepts plain JSON
	// from a server that has no Tables, as kubectl does.
	acceptTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
)

// get sends a GET and returns the open response on 2xx; otherwise an
// *client.APIError built from the Status body.
func (r *rawClient) get(ctx context.Context, path string, q url.Values, accept string) (*http.Response, error) {
	target := r.base + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "skiff-cli")
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, statusError(resp.StatusCode, data)
	}
	return resp, nil
}

// getJSON reads a whole answer.
func (r *rawClient) getJSON(ctx context.Context, path string, q url.Values, accept string) ([]byte, error) {
	resp, err := r.get(ctx, path, q, accept)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: read response: %w", path, err)
	}
	return data, nil
}

// reasons are those Kubernetes assumes for a failed response without a
// Status body.
var reasons = map[int]api.StatusReason{
	400: api.StatusReasonBadRequest, 401: api.StatusReasonUnauthorized, 403: api.StatusReasonForbidden,
	404: api.StatusReasonNotFound, 405: api.StatusReasonMethodNotAllowed, 406: api.StatusReasonNotAcceptable,
	409: api.StatusReasonConflict, 410: api.StatusReasonGone, 413: api.StatusReasonRequestEntityTooLarge,
	415: api.StatusReasonUnsupportedMediaType, 422: api.StatusReasonInvalid, 500: api.StatusReasonInternalError,
	503: api.StatusReasonServiceUnavailable, 504: api.StatusReasonTimeout,
}

func statusError(code int, body []byte) *client.APIError {
	var st api.Status
	if err := json.Unmarshal(body, &st); err == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		if st.Reason == "" {
			st.Reason = reasons[code]
		}
		return &client.APIError{Status: st}
	}
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = http.StatusText(code)
	}
	return client.NewAPIError(code, reasons[code], "%s", msg)
}

// namespaceFor is the namespace a request on info uses: "" for
// cluster-scoped resources and for -A.
func (s *session) namespaceFor(info *api.ResourceInfo, all bool) string {
	if !info.Namespaced || all {
		return ""
	}
	return s.ns
}
