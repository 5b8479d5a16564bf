// Package patch applies the bodies of PATCH requests to JSON objects, as the
// Kubernetes API server does, for the three patch types a Content-Type may
// name:
//
//   - application/merge-patch+json: a JSON merge patch (RFC 7386).
//   - application/json-patch+json: a JSON patch (RFC 6902), applied with
//     github.com/evanphx/json-patch/v5.
//   - application/strategic-merge-patch+json: a Kubernetes strategic merge
//     patch, implemented here.
//
// The server reads the stored object, encodes it as JSON, calls Apply, then
// decodes, validates and stores the result like the body of a PUT.
//
//	t, ok := patch.ParseContentType(r.Header.Get("Content-Type"))
//	if !ok { /* 415 */ }
//	out, err := patch.Apply(t, current, body)
//	if err != nil { /* patch.StatusCode(err) */ }
//
// # Strategic merge patch
//
// A strategic merge patch is a merge patch in which some lists merge
// element by element instead of being replaced. Which ones is fixed by one
// table, mergeKeys in keys.go, keyed by schema path (`spec.containers`,
// `spec.template.spec.containers[].ports`: `[]` stands for any index):
//
//   - a list with a merge key (containers by name, container ports by
//     containerPort, Service ports by port, conditions by type, ...): each
//     patch element merges into the original element with the same key
//     value, recursively, or is appended when there is none. Original
//     elements the patch does not name are kept, in place.
//   - a list merged as a set (metadata.finalizers, Node spec.podCIDRs): the
//     patch's values are appended unless present.
//   - any other list (spec.tolerations, args, ...) is atomic: replaced.
//
// Objects merge key by key, and null deletes a key, as in a merge patch.
// The directives:
//
//   - `"$patch": "replace"` in an object replaces the original object with
//     the patch's; as an element of a merged list, it makes the patch's
//     other elements replace the list.
//   - `"$patch": "delete"` in an object deletes it (the field goes away);
//     as an element of a keyed list, `{"name": "x", "$patch": "delete"}`
//     deletes the elements whose key is x.
//   - `"$deleteFromPrimitiveList/<field>": [values]` removes values from a
//     primitive list.
//   - `"$setElementOrder/<field>": [...]` reorders the elements it names (by
//     merge key, or by value in a set) within the positions they hold after
//     the merge; elements it does not name stay put. It is accepted and
//     ignored on atomic lists.
//   - `"$retainKeys": [fields]` drops the object's fields it does not list.
//
// # Invariants
//
//   - Apply never modifies its arguments and never panics (FuzzStrategicMerge).
//   - Its work is linear in the sizes of the document and the patch: a
//     keyed list is indexed by merge key once, never scanned per element
//     (TestStrategicMergeLargeListIsLinear, BenchmarkStrategicMergeLargeList).
//   - Numbers pass through unchanged: integers beyond 2^53 are kept
//     digit for digit. Output is compact JSON without HTML escaping.
//   - The result of a successful Apply is always a JSON object.
//   - A strategic merge patch with no lists and no directives gives the
//     same result as the same merge patch.
//   - Nulls and directives never reach the result: an element or object
//     the original did not have is built by merging the patch into nothing.
//   - Every error wraps exactly one sentinel of errors.go, and StatusCode
//     maps it as Kubernetes does: a malformed patch 400, a failed JSON-patch
//     test or an inapplicable JSON patch 422, an unknown type 415.
//
// # Differences from Kubernetes
//
//   - The merge-key table is by path, not by Go type, so it covers only the
//     resources Skiff serves and must be extended with them.
//   - `$patch: delete` on a nested object removes the field; Kubernetes
//     leaves an empty object, which decodes the same for every map field.
//   - Without $setElementOrder, merged elements keep their original
//     positions and new ones are appended; Kubernetes may move elements the
//     patch names into the patch's order.
//   - A merge patch (and a strategic merge patch) must be a JSON object;
//     RFC 7386 lets a patch replace the whole document with any value, but
//     no such result is a valid API object.
package patch
