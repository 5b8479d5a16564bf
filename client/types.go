package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/skiff-dev/skiff/api"
)

// Patch content types accepted by the server.
const (
	MergePatchType          = "application/merge-patch+json"
	JSONPatchType           = "application/json-patch+json"
	StrategicMergePatchType = "application/strategic-merge-patch+json"
)

// Propagation policies for DeleteOptions.PropagationPolicy.
const (
	DeletePropagationBackground = "Background"
	DeletePropagationForeground = "Foreground"
	DeletePropagationOrphan     = "Orphan"
)

// ListOptions select and page a list, and position a watch.
type ListOptions struct {
	LabelSelector string
	FieldSelector string
	// Limit and Continue page a list; zero Limit means everything.
	Limit    int64
	Continue string
	// ResourceVersion: for a watch, the revision after which events are
	// sent; for a list, as Kubernetes ("" is the latest, "0" any).
	ResourceVersion string
	// AllowWatchBookmarks asks a watch for BOOKMARK events.
	AllowWatchBookmarks bool
	// TimeoutSeconds asks the server to end a watch after that long.
	TimeoutSeconds *int64
}

func (o ListOptions) query(watch bool) url.Values {
	q := url.Values{}
	if o.LabelSelector != "" {
		q.Set("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		q.Set("fieldSelector", o.FieldSelector)
	}
	if o.Limit > 0 && !watch {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.Continue != "" && !watch {
		q.Set("continue", o.Continue)
	}
	if o.ResourceVersion != "" {
		q.Set("resourceVersion", o.ResourceVersion)
	}
	if watch {
		q.Set("watch", "true")
		if o.AllowWatchBookmarks {
			q.Set("allowWatchBookmarks", "true")
		}
		if o.TimeoutSeconds != nil {
			q.Set("timeoutSeconds", strconv.FormatInt(*o.TimeoutSeconds, 10))
		}
	}
	return q
}

// Preconditions make a delete fail with 409 Conflict unless the stored
// object still has this UID and/or resourceVersion.
type Preconditions struct {
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// DeleteOptions are the options of a DELETE, sent as a Kubernetes
// DeleteOptions body (and, for propagationPolicy and gracePeriodSeconds, as
// query parameters too, which the server also accepts).
type DeleteOptions struct {
	// PropagationPolicy is Background (the default), Foreground or Orphan.
	PropagationPolicy string
	// GracePeriodSeconds overrides a pod's terminationGracePeriodSeconds;
	// nil means the object's default, 0 immediate.
	GracePeriodSeconds *int64
	Preconditions      *Preconditions
}

func (o DeleteOptions) query() url.Values {
	q := url.Values{}
	if o.PropagationPolicy != "" {
		q.Set("propagationPolicy", o.PropagationPolicy)
	}
	if o.GracePeriodSeconds != nil {
		q.Set("gracePeriodSeconds", strconv.FormatInt(*o.GracePeriodSeconds, 10))
	}
	return q
}

// deleteOptionsBody is the Kubernetes DeleteOptions object.
type deleteOptionsBody struct {
	api.TypeMeta       `json:",inline"`
	GracePeriodSeconds *int64         `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *Preconditions `json:"preconditions,omitempty"`
	PropagationPolicy  string         `json:"propagationPolicy,omitempty"`
}

func (o DeleteOptions) body() *deleteOptionsBody {
	if o.PropagationPolicy == "" && o.GracePeriodSeconds == nil && o.Preconditions == nil {
		return nil
	}
	return &deleteOptionsBody{
		TypeMeta:           api.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"},
		GracePeriodSeconds: o.GracePeriodSeconds,
		Preconditions:      o.Preconditions,
		PropagationPolicy:  o.PropagationPolicy,
	}
}

// RawList is a list of any resource with its items left undecoded.
type RawList struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   api.ListMeta      `json:"metadata"`
	Items      []json.RawMessage `json:"items"`
}

// Unstructured is any object: apiVersion, kind and metadata decoded, every
// other top-level field (spec, status, data, ...) kept verbatim in Fields,
// so a read-modify-write round-trips fields this program does not know.
type Unstructured struct {
	api.TypeMeta
	api.ObjectMeta
	// Fields holds the top-level fields other than apiVersion, kind and
	// metadata.
	Fields map[string]json.RawMessage
}

var _ api.Object = (*Unstructured)(nil)

// UnmarshalJSON implements json.Unmarshaler.
func (u *Unstructured) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("client: decode object: %w", err)
	}
	*u = Unstructured{}
	for key, dst := range map[string]any{"apiVersion": &u.APIVersion, "kind": &u.Kind, "metadata": &u.ObjectMeta} {
		raw, ok := fields[key]
		if !ok {
			continue
		}
		delete(fields, key)
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return fmt.Errorf("client: decode object %s: %w", key, err)
		}
	}
	u.Fields = fields
	return nil
}

// MarshalJSON implements json.Marshaler.
func (u Unstructured) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(u.Fields)+3)
	for k, v := range u.Fields {
		out[k] = v
	}
	if u.APIVersion != "" {
		out["apiVersion"] = u.APIVersion
	}
	if u.Kind != "" {
		out["kind"] = u.Kind
	}
	out["metadata"] = &u.ObjectMeta
	return json.Marshal(out)
}

// Field decodes the top-level field name into v; a missing field leaves v
// unchanged and reports false.
func (u *Unstructured) Field(name string, v any) (bool, error) {
	raw, ok := u.Fields[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("client: decode field %s: %w", name, err)
	}
	return true, nil
}

// SetField encodes v as the top-level field name.
func (u *Unstructured) SetField(name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("client: encode field %s: %w", name, err)
	}
	if u.Fields == nil {
		u.Fields = map[string]json.RawMessage{}
	}
	u.Fields[name] = raw
	return nil
}
