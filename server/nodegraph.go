package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/store"
)

// nodeGraph is the half of Kubernetes' node authorizer that knows which
// objects a node may read: for every node, the Secrets, ConfigMaps,
// ServiceAccounts and PersistentVolumeClaims that the pods bound to it
// (spec.nodeName) reference. A pod references
//
//   - secrets: volumes[].secret.secretName, volumes[].projected.sources[].secret.name,
//     imagePullSecrets[].name, and in every container, init container and
//     ephemeral container env[].valueFrom.secretKeyRef.name and
//     envFrom[].secretRef.name;
//   - configmaps: volumes[].configMap.name,
//     volumes[].projected.sources[].configMap.name,
//     env[].valueFrom.configMapKeyRef.name, envFrom[].configMapRef.name;
//   - persistentvolumeclaims: volumes[].persistentVolumeClaim.claimName,
//     and <pod>-<volume> for volumes[].ephemeral;
//   - serviceaccounts: spec.serviceAccountName (or the deprecated
//     spec.serviceAccount).
//
// It is kept from a watch of the pods in the store (no scan per request):
// pods are decoded with their own narrow shapes, so a volume source the
// api types do not model yet still counts. A pod's nodeName and volumes
// do not change once set; an update replaces the pod's edges anyway.
type nodeGraph struct {
	log *slog.Logger

	mu sync.RWMutex
	// pods: pod "ns/name" -> its node and what it references.
	pods map[string]podEdges
	// refs: node -> referenced object -> how many of its pods reference it.
	refs map[string]map[objRef]int

	synced     chan struct{} // closed after the first full list
	syncedOnce sync.Once
}

// objRef names one namespaced object: resource is the plural
// ("secrets", "configmaps", "serviceaccounts", "persistentvolumeclaims").
type objRef struct {
	resource, namespace, name string
}

type podEdges struct {
	node string
	refs []objRef
}

func newNodeGraph(log *slog.Logger) *nodeGraph {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &nodeGraph{log: log, pods: map[string]podEdges{}, refs: map[string]map[objRef]int{}, synced: make(chan struct{})}
}

// hasRef reports whether a pod bound to node references the object.
func (g *nodeGraph) hasRef(node string, r objRef) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.refs[node][r] > 0
}

// waitSynced waits for the first full list, at most until ctx ends.
func (g *nodeGraph) waitSynced(ctx context.Context) bool {
	select {
	case <-g.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// setPod records the edges of one stored pod (raw JSON).
func (g *nodeGraph) setPod(raw []byte) error {
	key, e, err := podEdgesOf(raw)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removeLocked(key)
	g.addLocked(key, e)
	return nil
}

// deletePod drops the edges of a pod.
func (g *nodeGraph) deletePod(raw []byte) error {
	var m podRefs
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removeLocked(m.Metadata.Namespace + "/" + m.Metadata.Name)
	return nil
}

// replace makes pods (raw JSON) the complete set.
func (g *nodeGraph) replace(pods [][]byte) {
	type entry struct {
		key string
		e   podEdges
	}
	var all []entry
	for _, raw := range pods {
		key, e, err := podEdgesOf(raw)
		if err != nil {
			g.log.Warn("node graph: undecodable pod", "err", err)
			continue
		}
		all = append(all, entry{key, e})
	}
	g.mu.Lock()
	g.pods = map[string]podEdges{}
	g.refs = map[string]map[objRef]int{}
	for _, it := range all {
		g.addLocked(it.key, it.e)
	}
	g.mu.Unlock()
	g.syncedOnce.Do(func() { close(g.synced) })
}

func (g *nodeGraph) addLocked(key string, e podEdges) {
	if e.node == "" {
		return
	}
	g.pods[key] = e
	m := g.refs[e.node]
	if m == nil {
		m = map[objRef]int{}
		g.refs[e.node] = m
	}
	for _, r := range e.refs {
		m[r]++
	}
}

func (g *nodeGraph) removeLocked(key string) {
	old, ok := g.pods[key]
	if !ok {
		return
	}
	delete(g.pods, key)
	m := g.refs[old.node]
	for _, r := range old.refs {
		if m[r]--; m[r] <= 0 {
			delete(m, r)
		}
	}
	if len(m) == 0 {
		delete(g.refs, old.node)
	}
}

// run keeps the graph from the store's pods under prefix until ctx ends:
// a list, then a watch from its revision; any watch failure (compaction,
// a slow watcher) lists again.
func (g *nodeGraph) run(ctx context.Context, st store.Interface, prefix string) {
	delay := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := g.listAndWatch(ctx, st, prefix)
		if ctx.Err() != nil {
			return
		}
		g.log.Warn("node graph: pod watch ended, listing again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

func (g *nodeGraph) listAndWatch(ctx context.Context, st store.Interface, prefix string) error {
	res, err := st.List(ctx, prefix, store.ListOptions{})
	if err != nil {
		return err
	}
	raws := make([][]byte, len(res.Items))
	for i, kv := range res.Items {
		raws[i] = kv.Value
	}
	g.replace(raws)
	ch, err := st.Watch(ctx, prefix, res.Revision, store.WatchOptions{})
	if err != nil {
		return err
	}
	for ev := range ch {
		switch ev.Type {
		case store.EventPut:
			err = g.setPod(ev.KV.Value)
		case store.EventDelete:
			err = g.deletePod(ev.KV.Value)
		case store.EventError:
			return ev.Err
		}
		if err != nil {
			g.log.Warn("node graph: undecodable pod", "key", ev.KV.Key, "err", err)
		}
	}
	return errors.New("the watch closed")
}

// podRefs is the part of a pod the graph reads.
type podRefs struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		NodeName                 string        `json:"nodeName"`
		ServiceAccountName       string        `json:"serviceAccountName"`
		DeprecatedServiceAccount string        `json:"serviceAccount"`
		ImagePullSecrets         []named       `json:"imagePullSecrets"`
		Volumes                  []volumeRefs  `json:"volumes"`
		Containers               []containerRe `json:"containers"`
		InitContainers           []containerRe `json:"initContainers"`
		EphemeralContainers      []containerRe `json:"ephemeralContainers"`
	} `json:"spec"`
}

type named struct {
	Name string `json:"name"`
}

type volumeRefs struct {
	Name   string `json:"name"`
	Secret *struct {
		SecretName string `json:"secretName"`
	} `json:"secret"`
	ConfigMap             *named `json:"configMap"`
	PersistentVolumeClaim *struct {
		ClaimName string `json:"claimName"`
	} `json:"persistentVolumeClaim"`
	Ephemeral *struct{} `json:"ephemeral"`
	Projected *struct {
		Sources []struct {
			Secret    *named `json:"secret"`
			ConfigMap *named `json:"configMap"`
		} `json:"sources"`
	} `json:"projected"`
}

type containerRe struct {
	Env []struct {
		ValueFrom *struct {
			SecretKeyRef    *named `json:"secretKeyRef"`
			ConfigMapKeyRef *named `json:"configMapKeyRef"`
		} `json:"valueFrom"`
	} `json:"env"`
	EnvFrom []struct {
		SecretRef    *named `json:"secretRef"`
		ConfigMapRef *named `json:"configMapRef"`
	} `json:"envFrom"`
}

// podEdgesOf decodes a stored pod into its key and edges.
func podEdgesOf(raw []byte) (string, podEdges, error) {
	var p podRefs
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", podEdges{}, err
	}
	ns := p.Metadata.Namespace
	e := podEdges{node: p.Spec.NodeName}
	seen := map[objRef]bool{}
	add := func(resource, name string) {
		r := objRef{resource, ns, name}
		if name == "" || seen[r] {
			return
		}
		seen[r] = true
		e.refs = append(e.refs, r)
	}
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = p.Spec.DeprecatedServiceAccount
	}
	add("serviceaccounts", sa)
	for _, s := range p.Spec.ImagePullSecrets {
		add("secrets", s.Name)
	}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.Secret != nil:
			add("secrets", v.Secret.SecretName)
		case v.ConfigMap != nil:
			add("configmaps", v.ConfigMap.Name)
		case v.PersistentVolumeClaim != nil:
			add("persistentvolumeclaims", v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			add("persistentvolumeclaims", p.Metadata.Name+"-"+v.Name)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					add("secrets", s.Secret.Name)
				}
				if s.ConfigMap != nil {
					add("configmaps", s.ConfigMap.Name)
				}
			}
		}
	}
	for _, cs := range [][]containerRe{p.Spec.Containers, p.Spec.InitContainers, p.Spec.EphemeralContainers} {
		for _, c := range cs {
			for _, env := range c.Env {
				if vf := env.ValueFrom; vf != nil {
					if vf.SecretKeyRef != nil {
						add("secrets", vf.SecretKeyRef.Name)
					}
					if vf.ConfigMapKeyRef != nil {
						add("configmaps", vf.ConfigMapKeyRef.Name)
					}
				}
			}
			for _, ef := range c.EnvFrom {
				if ef.SecretRef != nil {
					add("secrets", ef.SecretRef.Name)
				}
				if ef.ConfigMapRef != nil {
					add("configmaps", ef.ConfigMapRef.Name)
				}
			}
		}
	}
	return ns + "/" + p.Metadata.Name, e, nil
}

// podsPrefix is the store prefix of every pod (apiserver.KeyFor's layout).
func podsPrefix(podKey string) string {
	// KeyFor(pods, "", "") is "<prefix>/" + "" + "/" + "": drop the last slash.
	return strings.TrimSuffix(podKey, "/")
}
