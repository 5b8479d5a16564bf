package apiserver

import (
	"errors"
	"net/http"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// authenticate requires `Authorization: Bearer <token>` naming a known
// user, and puts the user in the request context; otherwise 401.
func authenticate(authn Authenticator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			token = strings.TrimSpace(token)
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
