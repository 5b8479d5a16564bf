package api

import (
	"encoding/json"
	"fmt"
)

// ControllerRevision (apps/v1) is an immutable snapshot of a DaemonSet's
// or StatefulSet's pod template: Data is the patch that restores it
// (`{"spec":{"template":{...,"$patch":"replace"}}}`, what `kubectl
// rollout undo` applies), Revision its number in the owner's history.
type ControllerRevision struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	Revision   int64           `json:"revision"`
}

// LabelControllerRevisionHash is the label of a revision and of the pods
// made from it: the hash of the template it holds.
const LabelControllerRevisionHash = "controller-revision-hash"

// Template is the pod template the revision holds: its Data's
// spec.template without the "$patch" directive.
func (r *ControllerRevision) Template() (*PodTemplateSpec, error) {
	var d struct {
		Spec struct {
			Template map[string]any `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil || d.Spec.Template == nil {
		return nil, fmt.Errorf("controllerrevision %s holds no template", r.Name)
	}
	delete(d.Spec.Template, "$patch")
	b, err := json.Marshal(d.Spec.Template)
	if err != nil {
		return nil, fmt.Errorf("controllerrevision %s: %w", r.Name, err)
	}
	var t PodTemplateSpec
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("controllerrevision %s: %w", r.Name, err)
	}
	return &t, nil
}
