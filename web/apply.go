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
	"github.com/skiff-dev/skiff/kubectl/threeway"
)

// maxManifest bounds an applied manifest.
const maxManifest = 2 << 20

// applyResult is the outcome for one object of an applied manifest.
type applyResult struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Action is created, configured, unchanged or error.
	Action  string `json:"action"`
	Message string `json:"message,omitempty"`
}

// serveApply applies a YAML (or JSON) manifest of one or more documents
// (and List kinds) with the session's token, as `skiff apply` (and
// kubectl's client-side apply) does: each object's configuration is kept
// in the kubectl.kubernetes.io/last-applied-configuration annotation; an
// object that does not exist is created with it; one that exists gets the
// three-way strategic merge patch (kubectl/threeway) between the
// annotation, the document and the live object, so a field removed from
// the manifest is removed from the object, and fields others set (server
// defaults, status, a scale from the deployments page) are kept.
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
		if string(bytes.TrimSpace(j)) == "null" {
			continue
		}
		m, err := threeway.Decode(j)
		if err != nil {
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

// LastAppliedAnnotation holds the configuration an apply last applied,
// as kubectl and `skiff apply` write it.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// applyOne applies one object: created, configured (patched), unchanged,
// or error.
func (d *Dashboard) applyOne(r *http.Request, token, defNS string, o map[string]any) applyResult {
	av, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	modified, _ := threeway.StripNulls(o).(map[string]any)
	md, _ := modified["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		modified["metadata"] = md
	}
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	res := applyResult{Kind: kind, Name: name, Action: "error"}
	info := api.LookupKind(d.cfg.Resources, av, kind)
	switch {
	case info == nil:
		res.Message = fmt.Sprintf("no resource for apiVersion %q kind %q", av, kind)
		return res
	case name == "" && md["generateName"] != nil:
		res.Message = "cannot use generate name with apply"
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
	path := coll + "/" + url.PathEscape(name)

	// The annotation records the configuration without itself.
	if ann, ok := md["annotations"].(map[string]any); ok {
		delete(ann, LastAppliedAnnotation)
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	lastApplied, err := json.Marshal(modified)
	if err != nil {
		res.Message = err.Error()
		return res
	}
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[LastAppliedAnnotation] = string(lastApplied) + "\n"
	body, err := json.Marshal(modified)
	if err != nil {
		res.Message = err.Error()
		return res
	}
	// Twice at most: an object created by someone else between the GET
	// and the POST is then patched.
	for attempt := 0; ; attempt++ {
		cur := d.callAPI(r.Context(), r, http.MethodGet, path, "", token, "", nil)
		if cur.code == http.StatusNotFound {
			cr := d.callAPI(r.Context(), r, http.MethodPost, coll, "", token, "application/json", body)
			switch {
			case cr.code == http.StatusCreated || cr.code == http.StatusOK:
				res.Action = "created"
				return res
			case cr.code == http.StatusConflict && attempt == 0:
				continue
			}
			res.Message = statusMessage(cr)
			return res
		}
		if cur.code != http.StatusOK {
			res.Message = statusMessage(cur)
			return res
		}
		current, err := threeway.Decode(cur.body.Bytes())
		if err != nil {
			res.Message = err.Error()
			return res
		}
		var original map[string]any
		if prev, _ := nestedString(current, "metadata", "annotations", LastAppliedAnnotation); prev != "" {
			original, _ = threeway.Decode([]byte(prev)) // a broken record: as if none
		}
		patch := threeway.ThreeWay(original, modified, current)
		if len(patch) == 0 {
			res.Action = "unchanged"
			return res
		}
		pb, err := json.Marshal(patch)
		if err != nil {
			res.Message = err.Error()
			return res
		}
		pr := d.callAPI(r.Context(), r, http.MethodPatch, path, "", token, "application/strategic-merge-patch+json", pb)
		if pr.code != http.StatusOK {
			res.Message = statusMessage(pr)
			return res
		}
		res.Action = "configured"
		return res
	}
}

// nestedString is the string at a path of nested objects.
func nestedString(m map[string]any, path ...string) (string, bool) {
	var v any = m
	for _, k := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = o[k]
	}
	s, ok := v.(string)
	return s, ok
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
