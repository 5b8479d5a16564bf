package web

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Identity is who a token authenticates as, as the dashboard needs it.
type Identity struct {
	// Name is the user name shown in the header.
	Name string
	// ReadOnly hides the write controls. The API's authorizer is what
	// refuses the writes: the dashboard forwards the session's own token.
	ReadOnly bool
}

// AuthenticateFunc maps a bearer token to an identity; ok is false for a
// token that may not use the dashboard.
type AuthenticateFunc func(ctx context.Context, token string) (id Identity, ok bool)

// TraceFunc computes the packet path of a request from a pod to a URL, on
// behalf of the session's token (see TraceFromHandler).
type TraceFunc func(ctx context.Context, token, namespace, pod, url string) (*api.Trace, error)

// Config configures the dashboard.
type Config struct {
	// API is the API server's handler. The dashboard calls it in process,
	// with the session's token as the bearer token. Required.
	API http.Handler
	// Authenticate checks a token at login and on every request. Required.
	Authenticate AuthenticateFunc
	// SessionKey (at least 32 bytes) seals the session cookies; keep it
	// across restarts so that sessions survive them. Nil: a random key
	// (every restart logs everyone out).
	SessionKey []byte
	// SessionTTL is how long a login lasts (default 12h).
	SessionTTL time.Duration
	// Trace computes packet paths for the service page; nil answers 501
	// and the page says the trace is unavailable.
	Trace TraceFunc
	// ClusterDomain is the cluster's DNS domain, for the Service page's
	// DNS names (default "cluster.local").
	ClusterDomain string
	// Resources is the API's resource table (default api.Resources()).
	Resources []*api.ResourceInfo
	// Logger (default: discard).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Dashboard is the web dashboard's HTTP handler.
type Dashboard struct {
	cfg    Config
	seal   *sealer
	log    *slog.Logger
	now    func() time.Time
	assets *assets
	mux    *http.ServeMux
	logins *loginLimiter // failed logins per client address (loginlimit.go)
}

// New checks cfg and builds the dashboard.
func New(cfg Config) (*Dashboard, error) {
	if cfg.API == nil {
		return nil, errors.New("web: Config.API is required")
	}
	if cfg.Authenticate == nil {
		return nil, errors.New("web: Config.Authenticate is required")
	}
	key := cfg.SessionKey
	if key == nil {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("web: session key: %w", err)
		}
	}
	seal, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = "cluster.local"
	}
	cfg.ClusterDomain = strings.ToLower(strings.Trim(cfg.ClusterDomain, "."))
	if cfg.Resources == nil {
		cfg.Resources = api.Resources()
	}
	d := &Dashboard{cfg: cfg, seal: seal, log: cfg.Logger, now: cfg.Now}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	d.logins = newLoginLimiter(d.now)
	d.assets, err = loadAssets()
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", d.serveIndex)
	m.HandleFunc("GET /ui/assets/{file}", d.serveAsset)
	m.HandleFunc("GET /favicon.ico", d.serveFavicon)
	m.HandleFunc("POST /ui/login", d.serveLogin)
	m.HandleFunc("POST /ui/logout", d.withSession(d.serveLogout))
	m.HandleFunc("GET /ui/session", d.withSession(d.serveSession))
	m.HandleFunc("GET /ui/watch", d.withSession(d.serveWatch))
	m.HandleFunc("GET /ui/trace", d.withSession(d.serveTrace))
	m.HandleFunc("POST /ui/apply", d.withSession(d.serveApply))
	m.HandleFunc("GET /ui/secrets", d.withSession(d.serveSecrets))
	m.HandleFunc("GET /ui/cronjobs/next", d.withSession(d.serveCronJobNext))
	m.HandleFunc("GET /ui/services/{ns}/{name}", d.withSession(d.serveService))
	m.HandleFunc("GET /ui/exec/{ns}/{pod}", d.withSession(d.serveExec))
	m.HandleFunc("/ui/proxy/", d.withSession(d.serveProxy))
	m.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "not found")
	})
	d.mux = m
	return d, nil
}

// Owns reports whether path is the dashboard's: "/", "/favicon.ico" and
// everything under "/ui/". The server sends these here and the rest to
// the API.
func Owns(path string) bool {
	return path == "/" || path == "/favicon.ico" || strings.HasPrefix(path, "/ui/")
}

// ServeHTTP serves the dashboard's paths (see Owns).
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	d.mux.ServeHTTP(w, r)
}

type ctxKeySession struct{}

// authed is a request's session and identity.
type authed struct {
	sess session
	id   Identity
}

func authedFrom(ctx context.Context) authed {
	a, _ := ctx.Value(ctxKeySession{}).(authed)
	return a
}

// withSession requires a valid session (401 otherwise), re-checks its token
// (a rotated token ends its sessions), and on every method but GET/HEAD
// requires a same-origin request carrying the CSRF token.
func (d *Dashboard) withSession(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(CookieName)
		if err != nil {
			writeJSONError(w, http.StatusUnauthorized, "not logged in")
			return
		}
		sess, err := d.seal.open(c.Value, d.now())
		if err != nil {
			http.SetCookie(w, sessionCookie("", -1))
			writeJSONError(w, http.StatusUnauthorized, "session expired")
			return
		}
		id, ok := d.cfg.Authenticate(r.Context(), sess.Token)
		if !ok {
			http.SetCookie(w, sessionCookie("", -1))
			writeJSONError(w, http.StatusUnauthorized, "session token no longer valid")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !sameOrigin(r) || !d.seal.checkCSRF(sess, r.Header.Get(CSRFHeader)) {
				writeJSONError(w, http.StatusForbidden, "missing or wrong CSRF token")
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKeySession{}, authed{sess: sess, id: id})))
	}
}

// sessionInfo is /ui/session's and /ui/login's answer.
type sessionInfo struct {
	User     string `json:"user"`
	ReadOnly bool   `json:"readOnly"`
	CSRF     string `json:"csrf"`
	Trace    bool   `json:"trace"`  // a TraceFunc is configured
	Domain   string `json:"domain"` // the cluster DNS domain
}

func (d *Dashboard) info(a authed) sessionInfo {
	return sessionInfo{User: a.id.Name, ReadOnly: a.id.ReadOnly, CSRF: d.seal.csrf(a.sess), Trace: d.cfg.Trace != nil, Domain: d.cfg.ClusterDomain}
}

// serveLogin takes {"token": "..."} as JSON (a cross-site form cannot
// send that without a preflight) from the same origin.
func (d *Dashboard) serveLogin(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		writeJSONError(w, http.StatusForbidden, "cross-site login refused")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeJSONError(w, http.StatusUnsupportedMediaType, "login takes application/json")
		return
	}
	ip := clientIP(r.RemoteAddr)
	if wait := d.logins.wait(ip); wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeJSONError(w, http.StatusTooManyRequests, fmt.Sprintf("too many wrong tokens from %s: try again in %d s", ip, secs))
		return
	}
	var body struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&body); err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad login request")
		return
	}
	tok := strings.TrimSpace(body.Token)
	id, ok := d.cfg.Authenticate(r.Context(), tok)
	if tok == "" || !ok {
		d.logins.failed(ip)
		d.log.Info("dashboard login refused", "remote", r.RemoteAddr)
		writeJSONError(w, http.StatusUnauthorized, "invalid token")
		return
	}
	nonce, err := newNonce()
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	sess := session{Token: tok, Expires: d.now().Add(d.cfg.SessionTTL).Unix(), Nonce: nonce}
	v, err := d.seal.seal(sess)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	http.SetCookie(w, sessionCookie(v, int(d.cfg.SessionTTL/time.Second)))
	d.log.Info("dashboard login", "user", id.Name, "readOnly", id.ReadOnly, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, d.info(authed{sess: sess, id: id}))
}

func (d *Dashboard) serveLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, sessionCookie("", -1))
	w.WriteHeader(http.StatusNoContent)
}

func (d *Dashboard) serveSession(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, d.info(authedFrom(r.Context())))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeJSONError answers {"message": msg}.
func writeJSONError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"message": msg})
}
