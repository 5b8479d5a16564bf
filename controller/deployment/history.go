package deployment

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// Labels and annotations the controller reads and writes.
const (
	// LabelPodTemplateHash is set on every pod the controller creates: the
	// TemplateHash of the template it was made from.
	LabelPodTemplateHash = "pod-template-hash"
	// AnnotationRevision is the Deployment's current revision number, as
	// Kubernetes writes it.
	AnnotationRevision = "deployment.kubernetes.io/revision"
	// AnnotationRevisionHistory holds the Deployment's revisions: a JSON
	// list of Revision, oldest first, the current one last.
	AnnotationRevisionHistory = "skiff.dev/revision-history"
	// AnnotationRollbackTo asks the controller to roll the Deployment back
	// to a revision: a decimal revision number, or "0" for the revision
	// before the current one. The controller consumes (removes) it.
	AnnotationRollbackTo = "skiff.dev/rollback-to-revision"
	// AnnotationChangeCause is recorded with each revision, as kubectl
	// rollout history shows it.
	AnnotationChangeCause = "kubernetes.io/change-cause"
)

// maxHistoryBytes bounds the encoded history annotation (the API allows
// 256 KiB of annotations in all); the oldest revisions go first.
const maxHistoryBytes = 64 << 10

// Revision is one entry of a Deployment's revision history.
type Revision struct {
	Revision    int64               `json:"revision"`
	Hash        string              `json:"hash"`
	ChangeCause string              `json:"changeCause,omitempty"`
	Template    api.PodTemplateSpec `json:"template"`
}

// History decodes a Deployment's revision history annotation (nil when
// there is none), oldest revision first.
func History(d *api.Deployment) ([]Revision, error) {
	raw, ok := d.Annotations[AnnotationRevisionHistory]
	if !ok || raw == "" {
		return nil, nil
	}
	var h []Revision
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		return nil, fmt.Errorf("deployment: %s/%s: annotation %s: %w", d.Namespace, d.Name, AnnotationRevisionHistory, err)
	}
	slices.SortStableFunc(h, func(a, b Revision) int { return cmpInt64(a.Revision, b.Revision) })
	return h, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// revisionOf maps template hashes to their revision numbers.
func revisionOf(h []Revision) map[string]int64 {
	m := make(map[string]int64, len(h))
	for _, r := range h {
		m[r.Hash] = r.Revision
	}
	return m
}

// recordRevision makes hash the current (highest) revision of history h,
// as Kubernetes does when it creates or finds the new ReplicaSet: an
// unknown hash gets max+1; a hash already in the history (a rollback) is
// moved to max+1 with its template refreshed. It then trims the older
// revisions to limit, keeping any whose hash still has pods (live), and
// bounds the encoded size. It returns the new history and whether it
// differs from h.
func recordRevision(h []Revision, hash string, tmpl api.PodTemplateSpec, changeCause string, limit int32, live map[string]bool) ([]Revision, bool) {
	out := slices.Clone(h)
	changed := false
	if n := len(out); n == 0 || out[n-1].Hash != hash {
		var next int64 = 1
		if n > 0 {
			next = out[n-1].Revision + 1
		}
		out = slices.DeleteFunc(out, func(r Revision) bool { return r.Hash == hash })
		out = append(out, Revision{Revision: next, Hash: hash, ChangeCause: changeCause, Template: tmpl})
		changed = true
	} else if out[n-1].ChangeCause != changeCause && changeCause != "" {
		out[n-1].ChangeCause = changeCause
		changed = true
	}
	trimmed := trimHistory(out, limit, live)
	if len(trimmed) != len(out) {
		changed = true
	}
	return trimmed, changed
}

// trimHistory keeps the last (current) revision, the newest limit older
// ones, and older ones whose pods are still live; then drops the oldest
// until the encoding fits maxHistoryBytes.
func trimHistory(h []Revision, limit int32, live map[string]bool) []Revision {
	if len(h) == 0 {
		return h
	}
	keep := make([]Revision, 0, len(h))
	kept := int32(0)
	for i := len(h) - 2; i >= 0; i-- {
		switch {
		case kept < limit:
			kept++
			keep = append(keep, h[i])
		case live[h[i].Hash]:
			keep = append(keep, h[i])
		}
	}
	slices.Reverse(keep)
	keep = append(keep, h[len(h)-1])
	for len(keep) > 1 {
		b, err := json.Marshal(keep)
		if err == nil && len(b) <= maxHistoryBytes {
			break
		}
		keep = keep[1:]
	}
	return keep
}

// encodeHistory renders h for AnnotationRevisionHistory.
func encodeHistory(h []Revision) (string, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("deployment: encode revision history: %w", err)
	}
	return string(b), nil
}

// Rollback outcomes, as Kubernetes' event reasons.
const (
	ReasonRollbackDone              = "DeploymentRollback"
	ReasonRollbackRevisionNotFound  = "DeploymentRollbackRevisionNotFound"
	ReasonRollbackTemplateUnchanged = "DeploymentRollbackTemplateUnchanged"
)

// rollbackDecision is what a rollback request resolves to.
type rollbackDecision struct {
	// template to install, nil when the rollback does nothing (the
	// annotation is removed either way).
	template *api.PodTemplateSpec
	revision int64
	reason   string
	message  string
}

// resolveRollback resolves the value of AnnotationRollbackTo against the
// history and the current template hash, as Kubernetes' rollback did for
// spec.rollbackTo: "0" means the revision before the current one.
func resolveRollback(name, value string, h []Revision, currentHash string) rollbackDecision {
	want, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	if err != nil || want < 0 {
		return rollbackDecision{reason: ReasonRollbackRevisionNotFound,
			message: fmt.Sprintf("Invalid revision %q to roll back to.", value)}
	}
	if want == 0 {
		if len(h) < 2 {
			return rollbackDecision{reason: ReasonRollbackRevisionNotFound, message: "Unable to find last revision."}
		}
		want = h[len(h)-2].Revision
	}
	for i := range h {
		if h[i].Revision != want {
			continue
		}
		if h[i].Hash == currentHash {
			return rollbackDecision{revision: want, reason: ReasonRollbackTemplateUnchanged,
				message: fmt.Sprintf("The rollback revision contains the same template as current deployment %q", name)}
		}
		t := h[i].Template
		return rollbackDecision{template: &t, revision: want, reason: ReasonRollbackDone,
			message: fmt.Sprintf("Rolled back deployment %q to revision %d", name, want)}
	}
	return rollbackDecision{revision: want, reason: ReasonRollbackRevisionNotFound,
		message: "Unable to find the revision to rollback to."}
}
