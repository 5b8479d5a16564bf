package netagent

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/atomicwriter"
)

// downwardAPI and projected volumes, the kubelet's way
// (pkg/volume/downwardapi, pkg/volume/projected), in
// <pod dir>/volumes/kubernetes.io~downward-api/<name> and
// kubernetes.io~projected/<name>, written by package atomicwriter and
// always mounted read-only:
//
//   - a downwardAPI file holds one pod field (metadata.name, .namespace,
//     .uid, .labels['k'], .annotations['k'], or all labels or annotations
//     as sorted key="value" lines, the kubelet's FormatMap) or a
//     container's resource (limits/requests of cpu and memory, with the
//     divisor, as for env); its mode is the item's or defaultMode. The
//     files are rendered again at every volume refresh (volumeRefresh)
//     from the pod the agent watches, so a label or annotation change
//     reaches the file in place within seconds (a new ..data version);
//   - a projected volume merges its sources into one directory: configMap
//     and secret (as their volumes, items with their mode, defaultMode
//     otherwise, optional honoured), downwardAPI, and serviceAccountToken:
//     a token of the pod's ServiceAccount from a TokenRequest the node
//     makes (POST .../serviceaccounts/<name>/token, audiences [audience]
//     when set, expirationSeconds, boundObjectRef the Pod by name and
//     uid). Its file mode is defaultMode, 0600 when the pod sets fsGroup
//     (the kubelet's rule; then g+r for that group, as every file of the
//     volume: fsgroup.go). The token is kept per pod and asked for again
//     (the kubelet's token manager) once 80% of its lifetime has passed,
//     or 24h after it was issued, less a jitter of up to 10s; when the
//     request fails the token still valid is kept. A token is never
//     logged. The projected directory's parent is 0700, as for secrets.
const (
	volKindDownwardAPI = "kubernetes.io~downward-api"
	volKindProjected   = "kubernetes.io~projected"
)

// Token refresh, as the kubelet's token manager.
const (
	tokenMaxTTL    = 24 * time.Hour
	tokenMaxJitter = 10 * time.Second
)

// tokenSource asks the API for ServiceAccount tokens.
type tokenSource interface {
	serviceAccountToken(ctx context.Context, ns, name string, req *tokenRequest) (*tokenRequest, error)
}

// tokenRequest is the wire form of authentication.k8s.io/v1 TokenRequest.
type tokenRequest struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Spec       tokenRequestSpec   `json:"spec"`
	Status     tokenRequestStatus `json:"status,omitempty"`
}

type tokenRequestSpec struct {
	Audiences         []string        `json:"audiences,omitempty"`
	ExpirationSeconds *int64          `json:"expirationSeconds,omitempty"`
	BoundObjectRef    *boundObjectRef `json:"boundObjectRef,omitempty"`
}

type boundObjectRef struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	UID        string `json:"uid,omitempty"`
}

type tokenRequestStatus struct {
	Token               string   `json:"token"`
	ExpirationTimestamp api.Time `json:"expirationTimestamp"`
}

// podToken is a token the worker holds.
type podToken struct {
	token    string
	exp      time.Time
	lifetime time.Duration
}

// needsRefresh is the kubelet's requiresRefresh.
func (t *podToken) needsRefresh(now time.Time, jitter time.Duration) bool {
	iat := t.exp.Add(-t.lifetime)
	if now.After(iat.Add(tokenMaxTTL - jitter)) {
		return true
	}
	return now.After(t.exp.Add(-t.lifetime*20/100 - jitter))
}

// token returns the pod's token for p, from the worker's cache or a new
// TokenRequest.
func (w *podWorker) token(ctx context.Context, pod *api.Pod, p *api.ServiceAccountTokenProjection) (string, error) {
	exp := int64(3600)
	if p.ExpirationSeconds != nil {
		exp = *p.ExpirationSeconds
	}
	key := pod.Spec.ServiceAccountName + "/" + p.Audience + "/" + strconv.FormatInt(exp, 10)
	now := time.Now()
	if w.m.now != nil {
		now = w.m.now()
	}
	cur := w.tokens[key]
	if cur != nil && !cur.needsRefresh(now, time.Duration(rand.Float64()*float64(tokenMaxJitter))) {
		return cur.token, nil
	}
	if w.m.tokens == nil {
		return "", fmt.Errorf("failed to fetch token: the node cannot request ServiceAccount tokens")
	}
	req := &tokenRequest{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest", Spec: tokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &boundObjectRef{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: string(pod.UID)},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	tr, err := w.m.tokens.serviceAccountToken(ctx, pod.Namespace, pod.Spec.ServiceAccountName, req)
	if err == nil && (tr.Status.Token == "" || tr.Status.ExpirationTimestamp.IsZero()) {
		err = fmt.Errorf("the answer has no token or expirationTimestamp")
	}
	if err != nil {
		if cur != nil && now.Before(cur.exp) {
			w.log.Warn("token refresh failed; keeping the current token", "serviceAccount", pod.Spec.ServiceAccountName, "err", err)
			return cur.token, nil
		}
		return "", fmt.Errorf("failed to fetch token: %w", err)
	}
	life := time.Duration(exp) * time.Second
	if tr.Spec.ExpirationSeconds != nil {
		life = time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	}
	if w.tokens == nil {
		w.tokens = map[string]*podToken{}
	}
	w.tokens[key] = &podToken{token: tr.Status.Token, exp: tr.Status.ExpirationTimestamp.Time, lifetime: life}
	w.log.Debug("service account token fetched", "serviceAccount", pod.Spec.ServiceAccountName, "expires", tr.Status.ExpirationTimestamp.Time)
	return tr.Status.Token, nil
}

// downwardPayload is the files of downwardAPI items (a downwardAPI volume
// or a projected source).
func downwardPayload(pod *api.Pod, items []api.DownwardAPIVolumeFile, defaultMode *int32) (map[string]atomicwriter.File, error) {
	dm := fs.FileMode(0o644)
	if defaultMode != nil {
		dm = fs.FileMode(*defaultMode) & fs.ModePerm
	}
	out := make(map[string]atomicwriter.File, len(items))
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = downwardField(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			c := findContainer(pod, it.ResourceFieldRef.ContainerName)
			if c == nil {
				return nil, fmt.Errorf("downwardAPI %s: no container %q", it.Path, it.ResourceFieldRef.ContainerName)
			}
			v, err = resourceFieldValue(pod, c, it.ResourceFieldRef)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("downwardAPI %s: %w", it.Path, err)
		}
		m := dm
		if it.Mode != nil {
			m = fs.FileMode(*it.Mode) & fs.ModePerm
		}
		out[filepath.Clean(it.Path)] = atomicwriter.File{Data: []byte(v), Mode: m}
	}
	return out, nil
}

// downwardField is the kubelet's ExtractFieldPathAsString for the fields
// a volume may read.
func downwardField(pod *api.Pod, path string) (string, error) {
	switch path {
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	}
	return fieldRefValue(pod, path, envContext{})
}

// formatMap is the kubelet's FormatMap: key="value" lines in key order.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}

func findContainer(pod *api.Pod, name string) *api.Container {
	for _, cs := range [][]api.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

// writeProjectedVolume renders a downwardAPI or projected volume to dir;
// on a failure dir keeps what it holds.
func (w *podWorker) writeProjectedVolume(ctx context.Context, pod *api.Pod, v *api.Volume, dir string) (bool, error) {
	var payload map[string]atomicwriter.File
	var err error
	switch {
	case v.DownwardAPI != nil:
		payload, err = downwardPayload(pod, v.DownwardAPI.Items, v.DownwardAPI.DefaultMode)
	case v.Projected != nil:
		// Nobody else on the node reads a pod's tokens and Secrets.
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return false, err
		}
		if err := os.Chmod(filepath.Dir(dir), 0o700); err != nil {
			return false, err
		}
		payload, err = w.projectedPayload(ctx, pod, v.Projected)
	}
	if err != nil {
		return false, err
	}
	return atomicwriter.Write(dir, groupReadable(pod, payload)) // fsgroup.go
}

// projectedPayload is the kubelet's projected collectData.
func (w *podWorker) projectedPayload(ctx context.Context, pod *api.Pod, pv *api.ProjectedVolumeSource) (map[string]atomicwriter.File, error) {
	out := map[string]atomicwriter.File{}
	dm := int32(0o644)
	if pv.DefaultMode != nil {
		dm = *pv.DefaultMode
	}
	for _, src := range pv.Sources {
		var part map[string]atomicwriter.File
		var err error
		switch {
		case src.ConfigMap != nil:
			optional := isTrue(src.ConfigMap.Optional)
			cm, gerr := w.m.objects.configMap(ctx, pod.Namespace, src.ConfigMap.Name)
			var data map[string][]byte
			switch {
			case gerr == nil:
				data = make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
				for k, s := range cm.Data {
					data[k] = []byte(s)
				}
				maps.Copy(data, cm.BinaryData)
			case optional && isNotFound(gerr):
				continue
			default:
				return nil, gerr
			}
			part, err = volumePayload("configmap", data, src.ConfigMap.Items, &dm, optional)
		case src.Secret != nil:
			optional := isTrue(src.Secret.Optional)
			s, gerr := w.m.objects.secret(ctx, pod.Namespace, src.Secret.Name)
			switch {
			case gerr == nil:
			case optional && isNotFound(gerr):
				continue
			default:
				return nil, gerr
			}
			part, err = volumePayload("secret", s.Data, src.Secret.Items, &dm, optional)
		case src.DownwardAPI != nil:
			part, err = downwardPayload(pod, src.DownwardAPI.Items, &dm)
		case src.ServiceAccountToken != nil:
			tok, terr := w.token(ctx, pod, src.ServiceAccountToken)
			if terr != nil {
				return nil, terr
			}
			mode := fs.FileMode(dm) & fs.ModePerm
			if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
				mode = 0o600
			}
			part = map[string]atomicwriter.File{filepath.Clean(src.ServiceAccountToken.Path): {Data: []byte(tok), Mode: mode}}
		}
		if err != nil {
			return nil, err
		}
		maps.Copy(out, part)
	}
	return out, nil
}

// serviceAccountToken implements tokenSource over the API.
func (o *apiObjects) serviceAccountToken(ctx context.Context, ns, name string, req *tokenRequest) (*tokenRequest, error) {
	if o.do == nil {
		return nil, fmt.Errorf("the node's client cannot send a TokenRequest")
	}
	var out tokenRequest
	p := "/api/v1/namespaces/" + url.PathEscape(ns) + "/serviceaccounts/" + url.PathEscape(name) + "/token"
	if err := o.do.Do(ctx, "POST", p, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
