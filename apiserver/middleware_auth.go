package apiserver

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// authenticate requires `Authorization: Bearer <token>` naming a known
// user, and puts the user in the request context; otherwise 401. A
// WebSocket upgrade without the header (a browser cannot set it) may carry
// the token as the subprotocol base64url.bearer.authorization.k8s.io.<token
// in unpadded base64url>, as kube-apiserver reads it (its
// authentication/request/websocket); that entry is removed from the
// request's subprotocols.
func authenticate(authn Authenticator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			token = strings.TrimSpace(token)
			if r.Header.Get("Authorization") == "" && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
				scheme, token = "Bearer", websocketToken(r)
			}
			if !strings.EqualFold(scheme, "Bearer") || token == "" {
				writeError(w, NewUnauthorized(""))
				return
			}
			user, ok := authn.Authenticate(r.Context(), token)
			if !ok {
				writeError(w, NewUnauthorized(""))
				return
			}
			if rec := recordFrom(r.Context()); rec != nil {
				rec.user = user.Name
			}
			next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), user)))
		})
	}
}

// authorizePath asks the Authorizer about a non-resource request (the
// path, and the lowercase method as verb) and answers 403 when it says no.
func (s *Server) authorizePath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.nonResourceAllowed(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// nonResourceAllowed authorizes r as a non-resource request; on a refusal
// it has written the 403.
func (s *Server) nonResourceAllowed(w http.ResponseWriter, r *http.Request) bool {
	if s.authz == nil {
		return true
	}
	user, _ := UserFrom(r.Context())
	verb := strings.ToLower(r.Method)
	err := s.authz.Authorize(r.Context(), user, Attributes{Verb: verb, Path: r.URL.Path})
	if err == nil {
		return true
	}
	var se *StatusError
	if !errors.As(err, &se) {
		se = NewStatus(http.StatusForbidden, api.StatusReasonForbidden, "forbidden: "+err.Error())
	}
	writeError(w, se)
	return false
}

// bearerProtocolPrefix names the WebSocket subprotocol that carries a
// bearer token.
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// websocketToken takes the token out of r's subprotocols ("" when there is
// none, or more than one, or it does not decode).
func websocketToken(r *http.Request) string {
	var token string
	var rest []string
	found := 0
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			enc, ok := strings.CutPrefix(p, bearerProtocolPrefix)
			if !ok {
				if p != "" {
					rest = append(rest, p)
				}
				continue
			}
			found++
			b, err := base64.RawURLEncoding.DecodeString(enc)
			if err == nil {
				token = string(b)
			}
		}
	}
	if found != 1 {
		return ""
	}
	r.Header.Del("Sec-WebSocket-Protocol")
	if len(rest) > 0 {
		r.Header.Set("Sec-WebSocket-Protocol", strings.Join(rest, ", "))
	}
	return token
}
