package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/apiserver/pki"
	"github.com/skiff-dev/skiff/web"
)

// dashboardKeyFile holds the key that seals the dashboard's session
// cookies, so that sessions survive a restart.
const dashboardKeyFile = "tokens/dashboard-session.key"

// withDashboard puts the web dashboard in front of next, the rest of the
// listener (node join, the trace route, the API): the dashboard's paths
// (web.Owns) go to it, the others to next. The dashboard calls the API
// handler in process, and asks next for traces
// (GET /skiff/v1/namespaces/{ns}/pods/{name}/trace), both with the
// session's token. Its tokens are the API's: admins may write, the
// read-only dashboard token may only read (the authorizer enforces it),
// and no other user (nodes, the join token) may log in.
func (s *Server) withDashboard(next http.Handler) (http.Handler, error) {
	key, err := loadOrCreateKey(filepath.Join(s.cfg.DataDir, dashboardKeyFile))
	if err != nil {
		return nil, err
	}
	auth := newTokenAuth(s.bundle.AdminToken, s.bundle.NodeToken, s.bundle.DashboardToken, s.nodes)
	d, err := web.New(web.Config{
		API:        s.api.Handler(),
		SessionKey: key,
		Authenticate: func(ctx context.Context, token string) (web.Identity, bool) {
			u, ok := auth.Authenticate(ctx, token)
			switch {
			case !ok:
				return web.Identity{}, false
			case slices.Contains(u.Groups, groupMasters):
				return web.Identity{Name: u.Name}, true
			case slices.Contains(u.Groups, groupReadOnly):
				return web.Identity{Name: u.Name, ReadOnly: true}, true
			}
			return web.Identity{}, false
		},
		Trace:         web.TraceFromHandler(next),
		ClusterDomain: s.cfg.ClusterDomain,
		Resources:     s.resource,
		Logger:        s.log.With("component", "dashboard"),
	})
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if web.Owns(r.URL.Path) {
			d.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// logDashboard logs the dashboard's URL and token file; at the first start
// (no token file before it) also the read-only token itself, once.
func (s *Server) logDashboard(firstStart bool) {
	s.log.Info("dashboard", "url", s.url+"/", "readOnlyTokenFile", filepath.Join(s.cfg.DataDir, pki.DashboardTokenFile))
	if firstStart {
		s.log.Info("dashboard read-only token (log in with it, or with the admin token)", "token", s.bundle.DashboardToken)
	}
}

// loadOrCreateKey reads a hex key of 32 bytes, or writes a new one (0600).
func loadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) < 32 {
			return nil, fmt.Errorf("server: %s: not a hex key of 32 bytes", path)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("server: dashboard key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("server: dashboard key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("server: dashboard key: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("server: dashboard key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("server: dashboard key: %w", err)
	}
	return key, nil
}

// dashboardTokenExists reports whether the data dir already holds the
// dashboard token (so that only the first start prints it).
func dashboardTokenExists(dataDir string) bool {
	_, err := os.Stat(filepath.Join(dataDir, pki.DashboardTokenFile))
	return err == nil
}
