package web

import (
	"net/http"
	"net/url"
	"strings"
)

// ExecProtocol is the exec subprotocol the terminal speaks: Kubernetes'
// v5.channel.k8s.io, binary messages whose first byte is the stream
// (0 stdin, 1 stdout, 2 stderr, 3 the error channel's Status JSON, 4
// resize {"Width": W, "Height": H}, 255 close a stream).
const ExecProtocol = "v5.channel.k8s.io"

// serveExec is the pod terminal's WebSocket (GET /ui/exec/{ns}/{pod}
// ?container=c&command=sh). A browser cannot put an Authorization header
// on a WebSocket, so this route carries the session cookie to the API's
// pods/exec on the session's behalf: the same request, re-aimed at
// /api/v1/namespaces/{ns}/pods/{pod}/exec?command=...&stdin=true
// &stdout=true&tty=true&container=c, with the session's token as the
// bearer token and without the cookie or the browser's Origin, handed to
// the API handler in process with the connection, which the API's exec
// handler upgrades (the frames then go straight between the browser and
// the API). The API authorizes it (pods/exec, create): the read-only
// dashboard token is refused.
//
// A WebSocket handshake is a GET, so withSession checks no CSRF token:
// instead the request must carry an Origin header naming this host (every
// browser sends one on a WebSocket), and SameSite=Strict keeps the cookie
// off other sites' pages.
func (d *Dashboard) serveExec(w http.ResponseWriter, r *http.Request) {
	a := authedFrom(r.Context())
	if r.Header.Get("Origin") == "" || !sameOrigin(r) {
		writeJSONError(w, http.StatusForbidden, "cross-site WebSocket refused")
		return
	}
	if a.id.ReadOnly {
		// The API decides (pods/exec needs create, which Kubernetes since
		// 1.31 requires of WebSocket exec too); a read-only session is
		// refused here as well, whatever the API's rule for a GET.
		writeJSONError(w, http.StatusForbidden, "a read-only session cannot exec into pods")
		return
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		writeJSONError(w, http.StatusBadRequest, "the terminal is a WebSocket (Upgrade: websocket)")
		return
	}
	in := r.URL.Query()
	q := url.Values{"stdin": {"true"}, "stdout": {"true"}, "tty": {"true"}}
	cmd := in["command"]
	if len(cmd) == 0 {
		cmd = []string{"sh"}
	}
	q["command"] = cmd
	if c := in.Get("container"); c != "" {
		q.Set("container", c)
	}
	path := "/api/v1/namespaces/" + url.PathEscape(r.PathValue("ns")) + "/pods/" + url.PathEscape(r.PathValue("pod")) + "/exec"
	req := apiRequest(r.Context(), r, http.MethodGet, path, q.Encode(), a.sess.Token)
	req.Header.Del("Origin")
	for k := range req.Header {
		if strings.HasPrefix(k, "Sec-Fetch-") {
			req.Header.Del(k)
		}
	}
	d.cfg.API.ServeHTTP(w, req)
}
