// Package threeway computes the strategic merge patches that `skiff apply`
// and `skiff edit` send, as kubectl computes them client-side
// (CreateThreeWayMergePatch, CreateTwoWayMergePatch), for the resources
// Skiff serves.
//
// # Three-way patch (apply)
//
// ThreeWay(original, modified, current) is the patch that turns the live
// object current into one holding everything the new configuration
// modified says, and nothing the last applied configuration original said
// that modified no longer says:
//
//   - changes and additions: every field of modified whose value differs
//     from current's; fields only current has (server defaults, status,
//     fields other writers own) are left alone;
//   - deletions: every field original has and modified does not becomes
//     null; an element of a keyed list becomes {key: v, "$patch":
//     "delete"}; values of a set list go to
//     "$deleteFromPrimitiveList/<field>".
//
// An empty patch (len 0) means the object already matches: kubectl's
// "unchanged".
//
// # Lists
//
// Lists merge as the server's strategic merge does (apiserver/patch): by
// the merge key of their schema path (containers by name, container ports
// by containerPort, Service ports by port, ...), as sets (finalizers), or
// atomically (replaced whole when they differ). The table, mergeKeys, is a
// copy of the server's and must follow it. A keyed list whose elements do
// not all carry the key is treated as atomic.
//
// # Values
//
// Objects are decoded JSON (Decode keeps numbers as json.Number, so
// integers compare exactly). StripNulls removes the nulls a manifest may
// hold ("creationTimestamp: null"), which mean "not set" rather than
// "delete". The functions never modify their arguments.
package threeway
