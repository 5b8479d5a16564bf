package api

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// Validation of a pod spec's scheduling fields (affinity, topology spread,
// priority) with Kubernetes' field paths and messages.

var (
	supportedUnsatisfiableActions  = []string{string(DoNotSchedule), string(ScheduleAnyway)}
	supportedNodeInclusionPolicies = []string{string(NodeInclusionPolicyHonor), string(NodeInclusionPolicyIgnore)}
	supportedPreemptionPolicies    = []string{string(PreemptLowerPriority), string(PreemptNever)}
)

// validatePodSchedulingFields checks spec.affinity,
// spec.topologySpreadConstraints, spec.priorityClassName and
// spec.preemptionPolicy.
func validatePodSchedulingFields(s *PodSpec, path *field.Path) field.ErrorList {
	errs := validateAffinity(s.Affinity, path.Child("affinity"))
	errs = append(errs, validateTopologySpreadConstraints(s.TopologySpreadConstraints, path.Child("topologySpreadConstraints"))...)
	if s.PriorityClassName != "" {
		errs = append(errs, invalidEach(path.Child("priorityClassName"), s.PriorityClassName, NameIsDNSSubdomain(s.PriorityClassName, false))...)
	}
	if s.PreemptionPolicy != nil {
		errs = append(errs, ValidatePreemptionPolicy(s.PreemptionPolicy, path.Child("preemptionPolicy"))...)
	}
	return errs
}

// ValidatePreemptionPolicy checks a preemption policy (Required when empty).
func ValidatePreemptionPolicy(p *PreemptionPolicy, path *field.Path) field.ErrorList {
	switch *p {
	case PreemptLowerPriority, PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	default:
		return field.ErrorList{field.NotSupported(path, string(*p), supportedPreemptionPolicies)}
	}
}

func validateAffinity(a *Affinity, path *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := path.Child("nodeAffinity")
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			errs = append(errs, ValidateNodeSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		pp := p.Child("preferredDuringSchedulingIgnoredDuringExecution")
		for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			errs = append(errs, validateWeight(t.Weight, pp.Index(i).Child("weight"))...)
			errs = append(errs, ValidateNodeSelectorTerm(t.Preference, pp.Index(i).Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		p := path.Child("podAffinity")
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		errs = append(errs, validateWeightedPodAffinityTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("preferredDuringSchedulingIgnoredDuringExecution"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		p := path.Child("podAntiAffinity")
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		errs = append(errs, validateWeightedPodAffinityTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("preferredDuringSchedulingIgnoredDuringExecution"))...)
	}
	return errs
}

func validateWeight(w int32, path *field.Path) field.ErrorList {
	if w <= 0 || w > 100 {
		return field.ErrorList{field.Invalid(path, w, "must be in the range 1-100")}
	}
	return nil
}

// ValidateNodeSelector checks a required node selector: at least one term,
// each term's expressions and fields.
func ValidateNodeSelector(s *NodeSelector, path *field.Path) field.ErrorList {
	tp := path.Child("nodeSelectorTerms")
	if len(s.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(tp, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, t := range s.NodeSelectorTerms {
		errs = append(errs, ValidateNodeSelectorTerm(t, tp.Index(i))...)
	}
	return errs
}

// ValidateNodeSelectorTerm checks a term's matchExpressions (label
// requirements) and matchFields (metadata.name only).
func ValidateNodeSelectorTerm(t NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range t.MatchExpressions {
		errs = append(errs, ValidateNodeSelectorRequirement(r, path.Child("matchExpressions").Index(i))...)
	}
	for i, r := range t.MatchFields {
		errs = append(errs, validateNodeFieldSelectorRequirement(r, path.Child("matchFields").Index(i))...)
	}
	return errs
}

// ValidateNodeSelectorRequirement checks one node label expression: In and
// NotIn need values, Exists and DoesNotExist forbid them, Gt and Lt take
// exactly one.
func ValidateNodeSelectorRequirement(r NodeSelectorRequirement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case NodeSelectorOpIn, NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(path.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case NodeSelectorOpExists, NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(path.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case NodeSelectorOpGt, NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(path.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
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

func validateNodeFieldSelectorRequirement(r NodeSelectorRequirement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case NodeSelectorOpIn, NodeSelectorOpNotIn:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(path.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		errs = append(errs, field.Invalid(path.Child("operator"), string(r.Operator), "not a valid selector operator"))
	}
	if r.Key != NodeFieldSelectorKeyNodeName {
		errs = append(errs, field.Invalid(path.Child("key"), r.Key, "not a valid field selector key"))
	} else {
		for i, v := range r.Values {
			errs = append(errs, invalidEach(path.Child("values").Index(i), v, NameIsDNSSubdomain(v, false))...)
		}
	}
	return errs
}

func validatePodAffinityTerms(ts []PodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		errs = append(errs, validatePodAffinityTerm(t, path.Index(i))...)
	}
	return errs
}

func validateWeightedPodAffinityTerms(ts []WeightedPodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		errs = append(errs, validateWeight(t.Weight, path.Index(i).Child("weight"))...)
		errs = append(errs, validatePodAffinityTerm(t.PodAffinityTerm, path.Index(i).Child("podAffinityTerm"))...)
	}
	return errs
}

func validatePodAffinityTerm(t PodAffinityTerm, path *field.Path) field.ErrorList {
	errs := ValidateLabelSelector(t.LabelSelector, path.Child("labelSelector"))
	errs = append(errs, ValidateLabelSelector(t.NamespaceSelector, path.Child("namespaceSelector"))...)
	for _, ns := range t.Namespaces {
		// Kubernetes names the path "namespace" here, not "namespaces[i]".
		errs = append(errs, invalidEach(path.Child("namespace"), ns, ValidateNamespaceName(ns, false))...)
	}
	errs = append(errs, validateAffinityLabelKeys(t.MatchLabelKeys, t.LabelSelector, path.Child("matchLabelKeys"))...)
	errs = append(errs, validateAffinityLabelKeys(t.MismatchLabelKeys, t.LabelSelector, path.Child("mismatchLabelKeys"))...)
	for i, k := range t.MatchLabelKeys {
		if slices.Contains(t.MismatchLabelKeys, k) {
			errs = append(errs, field.Invalid(path.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, ValidateLabelName(t.TopologyKey, path.Child("topologyKey"))...)
}

// validateAffinityLabelKeys: matchLabelKeys/mismatchLabelKeys need a
// labelSelector and must be label names. (Kubernetes merges them into the
// selector at creation, so a key may also appear in it.)
func validateAffinityLabelKeys(keys []string, sel *LabelSelector, path *field.Path) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	if sel == nil {
		return field.ErrorList{field.Forbidden(path, "must not be specified when labelSelector is not set")}
	}
	var errs field.ErrorList
	for i, k := range keys {
		errs = append(errs, ValidateLabelName(k, path.Index(i))...)
	}
	return errs
}

func validateTopologySpreadConstraints(cs []TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		p := path.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if !slices.Contains(supportedUnsatisfiableActions, string(c.WhenUnsatisfiable)) {
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), string(c.WhenUnsatisfiable), supportedUnsatisfiableActions))
		}
		for _, rest := range cs[i+1:] {
			if rest.TopologyKey == c.TopologyKey && rest.WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		for _, pol := range []struct {
			name string
			p    *NodeInclusionPolicy
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
			if pol.p != nil && !slices.Contains(supportedNodeInclusionPolicies, string(*pol.p)) {
				errs = append(errs, field.NotSupported(p.Child(pol.name), string(*pol.p), supportedNodeInclusionPolicies))
			}
		}
		errs = append(errs, validateSpreadMatchLabelKeys(c.MatchLabelKeys, c.LabelSelector, p.Child("matchLabelKeys"))...)
		errs = append(errs, ValidateLabelSelector(c.LabelSelector, p.Child("labelSelector"))...)
	}
	return errs
}

func validateSpreadMatchLabelKeys(keys []string, sel *LabelSelector, path *field.Path) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	var errs field.ErrorList
	inSelector := map[string]bool{}
	if sel != nil {
		for k := range sel.MatchLabels {
			inSelector[k] = true
		}
		for _, r := range sel.MatchExpressions {
			inSelector[r.Key] = true
		}
	} else {
		errs = append(errs, field.Forbidden(path, "must not be specified when labelSelector is not set"))
	}
	for i, k := range keys {
		errs = append(errs, ValidateLabelName(k, path.Index(i))...)
		if inSelector[k] {
			errs = append(errs, field.Invalid(path.Index(i), k, "exists in both matchLabelKeys and labelSelector"))
		}
	}
	return errs
}

// ---- PriorityClass ----

// DefaultPriorityClass sets preemptionPolicy to PreemptLowerPriority.
func DefaultPriorityClass(pc *PriorityClass) {
	if pc.PreemptionPolicy == nil {
		p := PreemptLowerPriority
		pc.PreemptionPolicy = &p
	}
}

// ValidatePriorityClass is Kubernetes' rule: a DNS subdomain name; a name
// starting with "system-" only for the built-in classes with their values;
// other classes at most HighestUserDefinablePriority.
func ValidatePriorityClass(pc *PriorityClass) field.ErrorList {
	errs := ValidateObjectMeta(&pc.ObjectMeta, false, NameIsDNSSubdomain, field.NewPath("metadata"))
	if strings.HasPrefix(pc.Name, SystemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc); err != "" {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+SystemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, ValidatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

func knownSystemPriorityClass(pc *PriorityClass) string {
	for _, s := range SystemPriorityClasses() {
		if s.Name != pc.Name {
			continue
		}
		if s.Value != pc.Value {
			return fmt.Sprintf("value of %v PriorityClass must be %v", s.Name, s.Value)
		}
		if s.GlobalDefault != pc.GlobalDefault {
			return fmt.Sprintf("globalDefault of %v PriorityClass must be %v", s.Name, s.GlobalDefault)
		}
		return ""
	}
	return fmt.Sprintf("%v is not a known system priority class", pc.Name)
}

// ValidatePriorityClassUpdate: value and preemptionPolicy are immutable.
func ValidatePriorityClassUpdate(pc, old *PriorityClass) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&pc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidatePriorityClass(pc)...)
	if pc.Value != old.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, ValidateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}

// PreparePodForUpdate keeps spec.priority and spec.preemptionPolicy, which
// the Priority admission set at creation, when an update leaves them out
// (Kubernetes' admission does the same on update).
func PreparePodForUpdate(p, old *Pod) {
	if p.Spec.Priority == nil && old.Spec.Priority != nil {
		v := *old.Spec.Priority
		p.Spec.Priority = &v
	}
	if p.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
		v := *old.Spec.PreemptionPolicy
		p.Spec.PreemptionPolicy = &v
	}
}
