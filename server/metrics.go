package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/server/metricsapi"
	"github.com/skiff-dev/skiff/store"
)

// metricsObjects and metricsNodes connect server/metricsapi to the store
// and the node API: the pods and nodes whose metrics are served, the
// Ready nodes scraped, and each node's GET /metrics/resource (the
// built-in agent in-process, the others over the node API as logs are).
type metricsObjects struct {
	st          store.Interface
	pods, nodes *api.ResourceInfo
	napi        *nodeAPI
}

var (
	_ metricsapi.Objects = metricsObjects{}
	_ metricsapi.Source  = metricsObjects{}
)

func listAll[T any](ctx context.Context, st store.Interface, prefix string) ([]T, error) {
	var out []T
	opts := store.ListOptions{Limit: 500}
	for {
		res, err := st.List(ctx, prefix, opts)
		if err != nil {
			return nil, err
		}
		for _, kv := range res.Items {
			var v T
			if err := json.Unmarshal(kv.Value, &v); err != nil {
				return nil, fmt.Errorf("server: decode %s: %w", kv.Key, err)
			}
			out = append(out, v)
		}
		if !res.More || len(res.Items) == 0 {
			return out, nil
		}
		opts.After = res.Items[len(res.Items)-1].Key
	}
}

// Pods implements metricsapi.Objects.
func (m metricsObjects) Pods(ctx context.Context, ns string) ([]api.Pod, error) {
	return listAll[api.Pod](ctx, m.st, podsPrefix(apiserver.KeyFor(m.pods, ns, "")))
}

// Nodes implements metricsapi.Objects.
func (m metricsObjects) Nodes(ctx context.Context) ([]api.Node, error) {
	return listAll[api.Node](ctx, m.st, apiserver.KeyFor(m.nodes, "", ""))
}

// ReadyNodes implements metricsapi.Source: the nodes whose Ready
// condition is True (metrics-server scrapes no other).
func (m metricsObjects) ReadyNodes(ctx context.Context) ([]string, error) {
	nodes, err := m.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes {
		for _, c := range n.Status.Conditions {
			if c.Type == api.NodeReady && c.Status == api.ConditionTrue {
				out = append(out, n.Name)
			}
		}
	}
	return out, nil
}

// Scrape implements metricsapi.Source.
func (m metricsObjects) Scrape(ctx context.Context, node string) (io.ReadCloser, error) {
	ep, err := m.napi.nodeEndpoint(ctx, node, "")
	if err != nil {
		return nil, err
	}
	if ep.local != nil {
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/metrics/resource", nil)
		req.Header.Set("Accept", "text/plain")
		rec := httptest.NewRecorder()
		ep.local.ServeNodeAPI(rec, req)
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("node %s: /metrics/resource: %d %s", node, rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
		}
		return io.NopCloser(rec.Body), nil
	}
	resp, err := ep.get(ctx, "/metrics/resource", nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
