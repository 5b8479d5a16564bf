package patch

// listStrategy is how a strategic merge patch treats the list at one path.
// A path missing from the table holds an atomic list: the patch replaces it.
type listStrategy struct {
	// mergeKey names the field that identifies an element of a list of
	// objects; elements of the patch merge into the original element with
	// the same value of that field, or are appended.
	mergeKey string
	// set marks a list of primitives merged as a set: the patch's values
	// are appended unless already present.
	set bool
}

// mergeKeys is the one table of list merge strategies, keyed by schema path.
// A schema path names a field from the object's root with dots, and writes
// `[]` for "any element of this list" (a container's ports are at
// `spec.template.spec.containers[].ports` whatever the container's index).
// The paths are not per resource: a path that exists in several kinds
// (`status.conditions`) is merged the same way in all of them, as it is in
// Kubernetes. The table follows the patchStrategy/patchMergeKey tags of the
// Kubernetes types Skiff serves:
//
//	metadata.ownerReferences                 by uid
//	metadata.finalizers                      set
//	spec.containers, initContainers,
//	  ephemeralContainers                    by name
//	...containers[].ports                    by containerPort
//	...containers[].env                      by name
//	...containers[].volumeMounts             by mountPath
//	...containers[].volumeDevices            by devicePath
//	spec.volumes, spec.imagePullSecrets      by name
//	spec.hostAliases                         by ip
//	spec.topologySpreadConstraints           by topologyKey
//	spec.ports (Service)                     by port
//	spec.podCIDRs (Node)                     set
//	status.conditions                        by type
//	status.addresses (Node)                  by type
//	status.podIPs, status.hostIPs (Pod)      by ip
//	secrets (ServiceAccount)                 by name
//
// with every pod-spec and metadata path also under a workload's template
// (`spec.template.spec.…`, `spec.template.metadata.…`). Everything else,
// spec.tolerations, spec.nodeSelector's neighbours, EndpointSlice endpoints,
// is atomic.
//
// It is built once and never modified.
var mergeKeys = buildMergeKeys()

func buildMergeKeys() map[string]listStrategy {
	byKey := func(k string) listStrategy { return listStrategy{mergeKey: k} }
	set := listStrategy{set: true}

	t := map[string]listStrategy{
		"spec.ports":        byKey("port"),
		"spec.podCIDRs":     set,
		"status.conditions": byKey("type"),
		"status.addresses":  byKey("type"),
		"status.podIPs":     byKey("ip"),
		"status.hostIPs":    byKey("ip"),
		"secrets":           byKey("name"),
	}
	for _, meta := range []string{"metadata", "spec.template.metadata"} {
		t[meta+".ownerReferences"] = byKey("uid")
		t[meta+".finalizers"] = set
	}
	for _, pod := range []string{"spec", "spec.template.spec"} {
		t[pod+".volumes"] = byKey("name")
		t[pod+".imagePullSecrets"] = byKey("name")
		t[pod+".hostAliases"] = byKey("ip")
		t[pod+".topologySpreadConstraints"] = byKey("topologyKey")
		for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
			c := pod + "." + list
			t[c] = byKey("name")
			t[c+"[].ports"] = byKey("containerPort")
			t[c+"[].env"] = byKey("name")
			t[c+"[].volumeMounts"] = byKey("mountPath")
			t[c+"[].volumeDevices"] = byKey("devicePath")
		}
	}
	return t
}

// ListStrategy is the exported form of one entry of the merge table.
type ListStrategy struct {
	MergeKey string // the field identifying a list element ("" for a set)
	Set      bool   // a list of primitives merged as a set
}

// ListStrategies returns a copy of the merge table (schema path → strategy)
// for code that must agree with the server's strategic merge, such as the
// CLI's client-side three-way patch.
func ListStrategies() map[string]ListStrategy {
	out := make(map[string]ListStrategy, len(mergeKeys))
	for p, s := range mergeKeys {
		out[p] = ListStrategy{MergeKey: s.mergeKey, Set: s.set}
	}
	return out
}
