package apiserver

import (
	"net/http"
	"strings"
)

// authenticate requires `Authorization: Bearer <token>` naming a known
// user, and puts the user in the request context; otherwise 401.
func authenticate(authn Authenticator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := r.Header.Get("Authorization")
			token, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || token == "" {
				writeError(w, NewUnauthorized(""))
				return
			}
			user, ok := authn.Authenticate(r.Context(), strings.TrimSpace(token))
			if !ok {
				writeError(w, NewUnauthorized(""))
				return
			}
			next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), user)))
		})
	}
}
