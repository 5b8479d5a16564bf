package web

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"

	"github.com/skiff-dev/skiff/api"
)

// secretSummary is what the Secrets pages show before a reveal: a
// Secret's metadata, type and the names and sizes of its keys, never a
// value.
type secretSummary struct {
	Namespace         string    `json:"namespace"`
	Name              string    `json:"name"`
	Type              string    `json:"type"`
	Immutable         bool      `json:"immutable,omitempty"`
	CreationTimestamp string    `json:"creationTimestamp,omitempty"`
	Keys              []keySize `json:"keys"`
}

type keySize struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

func summarizeSecret(s *api.Secret) secretSummary {
	out := secretSummary{Namespace: s.Namespace, Name: s.Name, Type: s.Type, Immutable: s.Immutable != nil && *s.Immutable, Keys: []keySize{}}
	if out.Type == "" {
		out.Type = "Opaque"
	}
	if !s.CreationTimestamp.IsZero() {
		out.CreationTimestamp = s.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z")
	}
	for k, v := range s.Data {
		out.Keys = append(out.Keys, keySize{Name: k, Bytes: len(v)})
	}
	slices.SortFunc(out.Keys, func(a, b keySize) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// serveSecrets lists Secrets as summaries (GET /ui/secrets?namespace=ns,
// all namespaces without it), or one (&name=x), read with the session's
// token: a token that may not read Secrets (the read-only dashboard
// token) gets the API's 403 and its message. The values stay on the
// server: the page asks the API for a Secret itself (through /ui/proxy)
// only when the user reveals it. Nothing here logs.
func (d *Dashboard) serveSecrets(w http.ResponseWriter, r *http.Request) {
	a := authedFrom(r.Context())
	ns, name := r.URL.Query().Get("namespace"), r.URL.Query().Get("name")
	path := "/api/v1/secrets"
	if ns != "" {
		path = "/api/v1/namespaces/" + url.PathEscape(ns) + "/secrets"
	}
	if name != "" {
		if ns == "" {
			writeJSONError(w, http.StatusBadRequest, "name needs a namespace")
			return
		}
		path += "/" + url.PathEscape(name)
	}
	res := d.callAPI(r.Context(), r, http.MethodGet, path, "", a.sess.Token, "", nil)
	if res.code != http.StatusOK {
		passStatus(w, res)
		return
	}
	if name != "" {
		var s api.Secret
		if err := json.Unmarshal(res.body.Bytes(), &s); err != nil {
			writeJSONError(w, http.StatusBadGateway, "secret: "+err.Error())
			return
		}
		writeJSON(w, http.StatusOK, summarizeSecret(&s))
		return
	}
	var l api.SecretList
	if err := json.Unmarshal(res.body.Bytes(), &l); err != nil {
		writeJSONError(w, http.StatusBadGateway, "secrets: "+err.Error())
		return
	}
	items := make([]secretSummary, 0, len(l.Items))
	for i := range l.Items {
		items = append(items, summarizeSecret(&l.Items[i]))
	}
	slices.SortFunc(items, func(a, b secretSummary) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}
