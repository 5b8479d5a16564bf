package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"
)

// maxErrorBody bounds how much of a failed response is read.
const maxErrorBody = 1 << 20

// Client talks to one Skiff API server. It is safe for concurrent use.
type Client struct {
	base      *url.URL // scheme, host and path prefix without trailing slash
	http      *http.Client
	token     string
	userAgent string
}

// New checks cfg and builds a Client.
func New(cfg Config) (*Client, error) {
	if cfg.Server == "" {
		return nil, fmt.Errorf("client: config: %w: no server", ErrInvalidRequest)
	}
	u, err := url.Parse(cfg.Server)
	if err != nil {
		return nil, fmt.Errorf("client: config: %w: server %q: %v", ErrInvalidRequest, cfg.Server, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("client: config: %w: server %q: scheme must be https", ErrInvalidRequest, cfg.Server)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client: config: %w: server %q has no host", ErrInvalidRequest, cfg.Server)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("client: config: %w: server %q: only scheme, host and path allowed", ErrInvalidRequest, cfg.Server)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")

	hc := cfg.HTTPClient
	if hc == nil {
		tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if len(cfg.CAPEM) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(cfg.CAPEM) {
				return nil, fmt.Errorf("client: config: %w: CAPEM holds no PEM certificate", ErrInvalidRequest)
			}
			tlsCfg.RootCAs = pool
		}
		hc = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			TLSClientConfig:       tlsCfg,
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   32,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 0, // watches wait for their first event
			ExpectContinueTimeout: time.Second,
		}}
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = "skiff"
	}
	return &Client{base: u, http: hc, token: cfg.Token, userAgent: ua}, nil
}

// request is one call: method, escaped path (from the API root, with a
// leading slash), query, body and how to read the answer.
type request struct {
	method      string
	path        string
	query       url.Values
	body        any // nil, []byte, io.Reader or a value to JSON-encode
	contentType string
	out         any // nil, *[]byte or a value to JSON-decode into
}

// urlFor joins the server base and an escaped path with a query.
func (c *Client) urlFor(escapedPath string, q url.Values) (string, error) {
	ref, err := url.Parse(escapedPath)
	if err != nil {
		return "", fmt.Errorf("client: %w: path %q: %v", ErrInvalidRequest, escapedPath, err)
	}
	u := *c.base
	u.Path = c.base.Path + ref.Path
	u.RawPath = c.base.EscapedPath() + ref.EscapedPath()
	if u.RawPath == u.Path {
		u.RawPath = ""
	}
	query := ref.Query()
	for k, vs := range q {
		for _, v := range vs {
			query.Add(k, v)
		}
	}
	u.RawQuery = query.Encode()
	return u.String(), nil
}

// send performs r and returns the open response on 2xx; otherwise it reads
// the body into an APIError.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	target, err := c.urlFor(r.path, r.query)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	contentType := r.contentType
	switch b := r.body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case io.Reader:
		body = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: encode body: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(data)
	}
	if body != nil && contentType == "" {
		contentType = "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, errorFromResponse(resp.StatusCode, data))
	}
	return resp, nil
}

// do performs r and decodes the answer into r.out.
func (c *Client) do(ctx context.Context, r request) error {
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch out := r.out.(type) {
	case nil:
		_, err = io.Copy(io.Discard, resp.Body)
	case *[]byte:
		*out, err = io.ReadAll(resp.Body)
	default:
		// The answer replaces out: decoding into a used value would keep
		// fields the server dropped (a nodePort cleared by a type change).
		if v := reflect.ValueOf(out); v.Kind() == reflect.Pointer && !v.IsNil() {
			v.Elem().SetZero()
		}
		err = json.NewDecoder(resp.Body).Decode(out)
	}
	if err != nil {
		return fmt.Errorf("client: %s %s: read response: %w", r.method, r.path, err)
	}
	return nil
}

// Do is the raw escape hatch: it sends method to path (already escaped,
// from the API root, e.g. "/api/v1/namespaces/default/pods?limit=1") with
// body (nil, []byte, io.Reader or a value encoded as JSON) and decodes the
// answer into out (nil discards it, *[]byte keeps the raw bytes, anything
// else is JSON-decoded). Failed responses return an *APIError.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("client: %w: path %q must start with /", ErrInvalidRequest, path)
	}
	return c.do(ctx, request{method: method, path: path, body: body, out: out})
}
