package patch

// mergeObject applies an RFC 7386 merge patch object to target, which it
// modifies and returns: null deletes a key, an object merges recursively
// into an object (or replaces a non-object), anything else replaces.
func mergeObject(target, patch map[string]any) map[string]any {
	if target == nil {
		target = make(map[string]any, len(patch))
	}
	for k, v := range patch {
		if v == nil {
			delete(target, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			tm, _ := target[k].(map[string]any)
			target[k] = mergeObject(tm, pm)
			continue
		}
		target[k] = v
	}
	return target
}
