package api

// The create-only kinds of authentication.k8s.io/v1 and
// authorization.k8s.io/v1 (TokenRequest, SelfSubjectReview,
// SelfSubjectAccessReview): requests answered, never stored.

// TokenRequest asks for a ServiceAccount token
// (POST serviceaccounts/{name}/token).
type TokenRequest struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       TokenRequestSpec   `json:"spec"`
	Status     TokenRequestStatus `json:"status,omitempty"`
}

// TokenRequestSpec is what the token is for.
type TokenRequestSpec struct {
	Audiences         []string              `json:"audiences"`
	ExpirationSeconds *int64                `json:"expirationSeconds,omitempty"`
	BoundObjectRef    *BoundObjectReference `json:"boundObjectRef,omitempty"`
}

// BoundObjectReference is the Pod or Secret a token lives no longer than.
type BoundObjectReference struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	UID        string `json:"uid,omitempty"`
}

// TokenRequestStatus is the token.
type TokenRequestStatus struct {
	Token               string `json:"token"`
	ExpirationTimestamp Time   `json:"expirationTimestamp"`
}

// UserInfo is an authenticated user.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// SelfSubjectReview asks who the caller is (kubectl auth whoami).
type SelfSubjectReview struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Status     SelfSubjectReviewStatus `json:"status,omitempty"`
}

// SelfSubjectReviewStatus holds the caller.
type SelfSubjectReviewStatus struct {
	UserInfo UserInfo `json:"userInfo,omitempty"`
}

// SelfSubjectAccessReview asks whether the caller may do one request
// (kubectl auth can-i).
type SelfSubjectAccessReview struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       SelfSubjectAccessReviewSpec `json:"spec"`
	Status     SubjectAccessReviewStatus   `json:"status,omitempty"`
}

// SelfSubjectAccessReviewSpec: exactly one of the two is set.
type SelfSubjectAccessReviewSpec struct {
	ResourceAttributes    *ResourceAttributes    `json:"resourceAttributes,omitempty"`
	NonResourceAttributes *NonResourceAttributes `json:"nonResourceAttributes,omitempty"`
}

// ResourceAttributes describe a resource request.
type ResourceAttributes struct {
	Namespace     string                   `json:"namespace,omitempty"`
	Verb          string                   `json:"verb,omitempty"`
	Group         string                   `json:"group,omitempty"`
	Version       string                   `json:"version,omitempty"`
	Resource      string                   `json:"resource,omitempty"`
	Subresource   string                   `json:"subresource,omitempty"`
	Name          string                   `json:"name,omitempty"`
	FieldSelector *FieldSelectorAttributes `json:"fieldSelector,omitempty"`
	LabelSelector *LabelSelectorAttributes `json:"labelSelector,omitempty"`
}

// FieldSelectorAttributes is a request's field selector (rawSelector; the
// requirements form is accepted and ignored).
type FieldSelectorAttributes struct {
	RawSelector  string `json:"rawSelector,omitempty"`
	Requirements []any  `json:"requirements,omitempty"`
}

// LabelSelectorAttributes is accepted and ignored: no rule reads labels.
type LabelSelectorAttributes struct {
	RawSelector  string `json:"rawSelector,omitempty"`
	Requirements []any  `json:"requirements,omitempty"`
}

// NonResourceAttributes describe a request on a path.
type NonResourceAttributes struct {
	Path string `json:"path,omitempty"`
	Verb string `json:"verb,omitempty"`
}

// SubjectAccessReviewStatus is the answer.
type SubjectAccessReviewStatus struct {
	Allowed         bool   `json:"allowed"`
	Denied          bool   `json:"denied,omitempty"`
	Reason          string `json:"reason,omitempty"`
	EvaluationError string `json:"evaluationError,omitempty"`
}
