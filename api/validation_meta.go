package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// ValidateNameFunc validates an object name, or with prefix a generateName.
type ValidateNameFunc func(name string, prefix bool) []string

// Messages shared by many validators.
const (
	FieldImmutableErrorMsg = "field is immutable"
	isNegativeErrorMsg     = "must be greater than or equal to 0"
	isNotPositiveErrorMsg  = "must be greater than zero"
)

// Standard finalizer names that need no domain prefix.
const (
	FinalizerOrphanDependents = "orphan"
	FinalizerDeleteDependents = "foregroundDeletion"
)

// sortedKeys returns a map's keys in order, so errors come out in a stable order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// semanticEqual compares two values by their JSON encoding, so that nil and
// empty slices and maps left out by omitempty compare equal, as Kubernetes'
// Semantic.DeepEqual does.
func semanticEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// ValidateImmutableField reports newVal != oldVal as "field is immutable".
func ValidateImmutableField(newVal, oldVal any, path *field.Path) field.ErrorList {
	if !semanticEqual(newVal, oldVal) {
		return field.ErrorList{field.Invalid(path, newVal, FieldImmutableErrorMsg)}
	}
	return nil
}

// ValidateNonnegativeField reports v < 0.
func ValidateNonnegativeField(v int64, path *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(path, v, isNegativeErrorMsg)}
	}
	return nil
}

// ValidatePositiveField reports v <= 0.
func ValidatePositiveField(v int64, path *field.Path) field.ErrorList {
	if v <= 0 {
		return field.ErrorList{field.Invalid(path, v, isNotPositiveErrorMsg)}
	}
	return nil
}

func invalidEach(path *field.Path, v any, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(path, v, m))
	}
	return errs
}

// ValidateDNS1123LabelField wraps ValidateDNS1123Label into field errors.
func ValidateDNS1123LabelField(s string, path *field.Path) field.ErrorList {
	return invalidEach(path, s, ValidateDNS1123Label(s))
}

// ValidateDNS1123SubdomainField wraps ValidateDNS1123Subdomain into field errors.
func ValidateDNS1123SubdomainField(s string, path *field.Path) field.ErrorList {
	return invalidEach(path, s, ValidateDNS1123Subdomain(s))
}

// ValidateQualifiedNameField wraps ValidateQualifiedName into field errors.
func ValidateQualifiedNameField(s string, path *field.Path) field.ErrorList {
	return invalidEach(path, s, ValidateQualifiedName(s))
}

// ValidateLabelName checks one label key (reported at path, as Kubernetes does).
func ValidateLabelName(key string, path *field.Path) field.ErrorList {
	return invalidEach(path, key, ValidateQualifiedName(key))
}

// ValidateLabels checks every key and value of a label map (labels, a
// Service selector, a nodeSelector). Key errors are reported at path, value
// errors at path[key].
func ValidateLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		errs = append(errs, ValidateLabelName(k, path)...)
		errs = append(errs, invalidEach(path.Key(k), labels[k], ValidateLabelValue(labels[k]))...)
	}
	return errs
}

// ValidateAnnotations checks annotation keys (qualified names, any case)
// and that keys and values together stay within 256 KiB.
func ValidateAnnotations(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	total := 0
	for _, k := range sortedKeys(annotations) {
		errs = append(errs, invalidEach(path, k, ValidateQualifiedName(strings.ToLower(k)))...)
		total += len(k) + len(annotations[k])
	}
	if total > TotalAnnotationSizeLimitB {
		errs = append(errs, field.TooLong(path, "", TotalAnnotationSizeLimitB))
	}
	return errs
}

// ValidateLabelSelector checks a structured selector's keys, values and
// operators. A nil selector is valid here; callers that need one say so.
func ValidateLabelSelector(s *LabelSelector, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := ValidateLabels(s.MatchLabels, path.Child("matchLabels"))
	for i, r := range s.MatchExpressions {
		errs = append(errs, ValidateLabelSelectorRequirement(r, path.Child("matchExpressions").Index(i))...)
	}
	return errs
}

// ValidateLabelSelectorRequirement checks one matchExpressions entry.
func ValidateLabelSelectorRequirement(r LabelSelectorRequirement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case LabelSelectorOpIn, LabelSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(path.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case LabelSelectorOpExists, LabelSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(path.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	default:
		errs = append(errs, field.Invalid(path.Child("operator"), string(r.Operator), "not a valid selector operator"))
	}
	errs = append(errs, ValidateLabelName(r.Key, path.Child("key"))...)
	for i, v := range r.Values {
		errs = append(errs, invalidEach(path.Child("values").Index(i), v, ValidateLabelValue(v))...)
	}
	return errs
}

// ValidateOwnerReferences checks owner references and that at most one is
// the controller.
func ValidateOwnerReferences(refs []OwnerReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	firstController := ""
	for _, ref := range refs {
		version := ref.APIVersion
		if i := strings.LastIndex(version, "/"); i >= 0 {
			version = version[i+1:]
		}
		if version == "" {
			errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, "version must not be empty"))
		}
		if ref.Kind == "" {
			errs = append(errs, field.Invalid(path.Child("kind"), ref.Kind, "must not be empty"))
		}
		if ref.Name == "" {
			errs = append(errs, field.Invalid(path.Child("name"), ref.Name, "must not be empty"))
		}
		if ref.UID == "" {
			errs = append(errs, field.Invalid(path.Child("uid"), ref.UID, "must not be empty"))
		}
		if ref.Controller != nil && *ref.Controller {
			cur := ref.Kind + "/" + ref.Name
			if firstController != "" {
				errs = append(errs, field.Invalid(path, refs, fmt.Sprintf("Only one reference can have Controller set to true. Found \"true\" in references for %v and %v", firstController, cur)))
			} else {
				firstController = cur
			}
		}
	}
	return errs
}

// ValidateFinalizers checks finalizer names: qualified names, and the
// unprefixed ones must be standard (kubernetes, orphan, foregroundDeletion).
func ValidateFinalizers(finalizers []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	orphan, foreground := false, false
	for _, f := range finalizers {
		errs = append(errs, validateFinalizerName(f, path)...)
		switch f {
		case FinalizerOrphanDependents:
			orphan = true
		case FinalizerDeleteDependents:
			foreground = true
		}
	}
	if orphan && foreground {
		errs = append(errs, field.Invalid(path, finalizers, fmt.Sprintf("finalizer %s and %s cannot be both set", FinalizerOrphanDependents, FinalizerDeleteDependents)))
	}
	return errs
}

func validateFinalizerName(f string, path *field.Path) field.ErrorList {
	errs := invalidEach(path, f, ValidateQualifiedName(f))
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(f, "/") {
		switch f {
		case FinalizerKubernetes, FinalizerOrphanDependents, FinalizerDeleteDependents:
		default:
			errs = append(errs, field.Invalid(path, f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// ValidateObjectMeta checks the metadata of a new object: name (or
// generateName) with nameFn, namespace presence by scope, labels,
// annotations, owner references and finalizers.
func ValidateObjectMeta(m *ObjectMeta, namespaced bool, nameFn ValidateNameFunc, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.GenerateName != "" {
		errs = append(errs, invalidEach(path.Child("generateName"), m.GenerateName, nameFn(m.GenerateName, true))...)
	}
	if m.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "name or generateName is required"))
	} else {
		errs = append(errs, invalidEach(path.Child("name"), m.Name, nameFn(m.Name, false))...)
	}
	if namespaced {
		if m.Namespace == "" {
			errs = append(errs, field.Required(path.Child("namespace"), ""))
		} else {
			errs = append(errs, invalidEach(path.Child("namespace"), m.Namespace, ValidateNamespaceName(m.Namespace, false))...)
		}
	} else if m.Namespace != "" {
		errs = append(errs, field.Forbidden(path.Child("namespace"), "not allowed on this type"))
	}
	errs = append(errs, ValidateNonnegativeField(m.Generation, path.Child("generation"))...)
	errs = append(errs, ValidateLabels(m.Labels, path.Child("labels"))...)
	errs = append(errs, ValidateAnnotations(m.Annotations, path.Child("annotations"))...)
	errs = append(errs, ValidateOwnerReferences(m.OwnerReferences, path.Child("ownerReferences"))...)
	errs = append(errs, ValidateFinalizers(m.Finalizers, path.Child("finalizers"))...)
	return errs
}

// ValidateObjectMetaUpdate checks an update's metadata against the stored
// object's: name, namespace, uid, creationTimestamp, deletionTimestamp and
// deletionGracePeriodSeconds are immutable, generation may not decrease,
// and no finalizer may be added once deletion has started. The API server
// is expected to have copied the system fields a client may leave out (see
// PrepareObjectMetaForUpdate) before calling it. The resourceVersion check
// (stale or missing) is the API server's, not this function's.
func ValidateObjectMetaUpdate(m, old *ObjectMeta, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if old.DeletionTimestamp != nil {
		for _, f := range m.Finalizers {
			if !slices.Contains(old.Finalizers, f) {
				errs = append(errs, field.Forbidden(path.Child("finalizers"), fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %q", f)))
			}
		}
	}
	if m.Generation < old.Generation {
		errs = append(errs, field.Invalid(path.Child("generation"), m.Generation, "must not be decremented"))
	}
	errs = append(errs, ValidateImmutableField(m.Name, old.Name, path.Child("name"))...)
	errs = append(errs, ValidateImmutableField(m.Namespace, old.Namespace, path.Child("namespace"))...)
	errs = append(errs, ValidateImmutableField(m.UID, old.UID, path.Child("uid"))...)
	errs = append(errs, ValidateImmutableField(m.CreationTimestamp, old.CreationTimestamp, path.Child("creationTimestamp"))...)
	errs = append(errs, ValidateImmutableField(m.DeletionTimestamp, old.DeletionTimestamp, path.Child("deletionTimestamp"))...)
	errs = append(errs, ValidateImmutableField(m.DeletionGracePeriodSeconds, old.DeletionGracePeriodSeconds, path.Child("deletionGracePeriodSeconds"))...)
	errs = append(errs, ValidateLabels(m.Labels, path.Child("labels"))...)
	errs = append(errs, ValidateAnnotations(m.Annotations, path.Child("annotations"))...)
	errs = append(errs, ValidateOwnerReferences(m.OwnerReferences, path.Child("ownerReferences"))...)
	errs = append(errs, ValidateFinalizers(m.Finalizers, path.Child("finalizers"))...)
	return errs
}

// PrepareObjectMetaForUpdate copies into m the server-owned fields of old
// that an update may not change, as Kubernetes' rest.BeforeUpdate does: uid
// when the client sent none, creationTimestamp, deletionTimestamp,
// deletionGracePeriodSeconds and generation (the server bumps generation
// itself when the spec changes).
func PrepareObjectMetaForUpdate(m, old *ObjectMeta) {
	if m.UID == "" {
		m.UID = old.UID
	}
	if !old.CreationTimestamp.IsZero() {
		m.CreationTimestamp = old.CreationTimestamp
	}
	if old.DeletionTimestamp != nil {
		m.DeletionTimestamp = old.DeletionTimestamp
	}
	if old.DeletionGracePeriodSeconds != nil {
		m.DeletionGracePeriodSeconds = old.DeletionGracePeriodSeconds
	}
	m.Generation = old.Generation
}
