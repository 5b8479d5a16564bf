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
