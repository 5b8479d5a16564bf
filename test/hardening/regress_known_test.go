//go:build hardening_known

package hardening

import (
	"context"
	"net/http"
	"testing"

	"github.com/skiff-dev/skiff/server/servertest"
)

// TestRegressKnownLenient holds the query parameters the server accepts
// where Kubernetes answers 400: it ignores them (the list or watch goes
// on as if they were absent) instead of refusing them. None writes, none
// is a 5xx or a hang of the server. (Boolean parameters such as
// watch=maybe are not here: Kubernetes reads any value but "false" and "0"
// as true, and so does Skiff.) Run with
// `go test -tags hardening_known -run TestRegressKnownLenient
// ./test/hardening/`; it fails until the parameters are checked.
func TestRegressKnownLenient(t *testing.T) {
	s := startServer(t, servertest.Options{Logger: regressLogger(t)})
	h := newRegressHTTP(t, s, s.Bundle().AdminToken)
	for _, tc := range []regressCase{
		{"list resourceVersion not a number", http.MethodGet, regressSvcs + "?resourceVersion=abc", "", nil, 400},
		{"list resourceVersion negative", http.MethodGet, regressSvcs + "?resourceVersion=-5", "", nil, 400},
		{"resourceVersionMatch bogus", http.MethodGet, regressSvcs + "?resourceVersion=1&resourceVersionMatch=Bogus", "", nil, 400},
		{"resourceVersionMatch without resourceVersion", http.MethodGet, regressSvcs + "?resourceVersionMatch=Exact", "", nil, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), regressTimeout)
			defer cancel()
			r, err := h.do(ctx, tc.method, tc.path, tc.ct, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if r.code != tc.code {
				t.Fatalf("%d, want %d: %.200q", r.code, tc.code, r.body)
			}
			regressStatus(t, r)
		})
	}
}
