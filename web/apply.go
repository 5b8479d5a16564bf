package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/skiff-dev/skiff/api"
)

// maxManifest bounds an applied manifest.
const maxManifest = 2 << 20

// applyResult is the outcome for one object of an applied manifest.
type applyResult struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Action is created, configured or error.
	Action  string `json:"action"`
	Message string `json:"message,omitempty"`
}

// serveApply applies a YAML (or JSON) manifest of one or more documents
// (and List kinds) with the session's token: each object is created, or,
// when it exists, patched with a strategic merge patch of the document
// (the document's fields win; fields it leaves out are kept). This is not
// kubectl's three-way apply: removing a field from a manifest does not
// remove it from the object.
func (d *Dashboard) serveApply(w http.ResponseWriter, r *http.Request) {
	a := authedFrom(r.Context())
	data, err := io.ReadAll(io.LimitReader(r.Body, maxManifest+1))
	if err != nil || len(data) > maxManifest {
		writeJSONError(w, http.StatusRequestEntityTooLarge, "manifest too large or unreadable")
		return
	}
	defNS := r.URL.Query().Get("namespace")
	if defNS == "" {
		defNS = "default"
	}
	var objs []map[string]any
	for i, doc := range splitYAML(data) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("document %d: %v", i+1, err))
			return
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil || m == nil {
			if string(bytes.TrimSpace(j)) == "null" {
				continue
			}
			writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("document %d is not an object", i+1))
			return
		}
		if k, _ := m["kind"].(string); strings.HasSuffix(k, "List") {
			items, _ := m["items"].([]any)
			for _, it := range items {
				if o, ok := it.(map[string]any); ok {
					objs = append(objs, o)
				}
			}
			continue
		}
		objs = append(objs, m)
	}
	if len(objs) == 0 {
		writeJSONError(w, http.StatusBadRequest, "the manifest holds no objects")
		return
	}
	results := make([]applyResult, 0, len(objs))
	for _, o := range objs {
		results = append(results, d.applyOne(r, a.sess.Token, defNS, o))
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

func (d *Dashboard) applyOne(r *http.Request, token, defNS string, o map[string]any) applyResult {
	av, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	res := applyResult{Kind: kind, Name: name, Action: "error"}
	info := api.LookupKind(d.cfg.Resources, av, kind)
	switch {
	case info == nil:
		res.Message = fmt.Sprintf("no resource for apiVersion %q kind %q", av, kind)
		return res
	case name == "":
		res.Message = "metadata.name is required"
		return res
	}
	base := "/api/" + info.Version
	if info.Group != "" {
		base = "/apis/" + info.Group + "/" + info.Version
	}
	if info.Namespaced {
		if ns == "" {
			ns = defNS
			md["namespace"] = ns
		}
		res.Namespace = ns
		base += "/namespaces/" + url.PathEscape(ns)
	}
	coll := base + "/" + info.Resource
	body, _ := json.Marshal(o)
	cr := d.callAPI(r.Context(), r, http.MethodPost, coll, "", token, "application/json", body)
	if cr.code == http.StatusCreated || cr.code == http.StatusOK {
		res.Action = "created"
		return res
	}
	if cr.code != http.StatusConflict {
		res.Message = statusMessage(cr)
		return res
	}
	pr := d.callAPI(r.Context(), r, http.MethodPatch, coll+"/"+url.PathEscape(name), "", token, "application/strategic-merge-patch+json", body)
	if pr.code == http.StatusUnsupportedMediaType {
		pr = d.callAPI(r.Context(), r, http.MethodPatch, coll+"/"+url.PathEscape(name), "", token, "application/merge-patch+json", body)
	}
	if pr.code != http.StatusOK {
		res.Message = statusMessage(pr)
		return res
	}
	res.Action = "configured"
	return res
}

// statusMessage is the message of an API Status answer.
func statusMessage(b *bufferWriter) string {
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b.body.Bytes(), &st) == nil && st.Message != "" {
		return st.Message
	}
	return fmt.Sprintf("HTTP %d", b.code)
}

// splitYAML splits a YAML stream at its "---" document markers.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxManifest+1)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "---") && strings.TrimSpace(strings.SplitN(line[3:], "#", 2)[0]) == "" {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	return append(docs, cur.Bytes())
}
