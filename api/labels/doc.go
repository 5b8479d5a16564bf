// Package labels parses and matches Kubernetes label selectors: equality
// (=, ==, !=), set-based (in, notin), exists (key), does-not-exist (!key),
// and the numeric gt/lt forms (key>1, key<5) that Kubernetes also accepts.
//
// The grammar, the key and value validation and the error wording follow
// k8s.io/apimachinery/pkg/labels, so a selector that kubectl accepts is
// accepted here, one it rejects is rejected with the same message
// ("unable to parse requirement: ...", "found ',', expected: ...").
//
//	selector    = "" | requirement { "," requirement }
//	requirement = [ "!" ] key
//	            | key ( "=" | "==" | "!=" ) [ value ]
//	            | key ( "in" | "notin" ) "(" [ value { "," value } ] ")"
//	            | key ( ">" | "<" ) integer
//
// Whitespace (space, tab, CR, LF) may surround every token.
//
// # Invariants
//
//   - A Selector returned by Parse, Everything, SelectorFromSet or
//     FromLabelSelector is never nil and is immutable; it is safe for
//     concurrent use.
//   - String is canonical: requirements are sorted by key (stably, so two
//     requirements on one key keep their order) and the values of in/notin
//     are sorted and de-duplicated. For every s that Parse accepts,
//     Parse(sel.String()) succeeds and yields an equal selector
//     (FuzzParseLabels checks this).
//   - "!=" and notin match a label set that lacks the key, as in Kubernetes;
//     "=", "==", in, gt and lt never do.
//   - The empty selector (Everything) matches every label set; Nothing
//     matches none. A nil label map is an empty label set.
//   - Every key is a qualified name (an optional DNS-1123 subdomain prefix of
//     at most 253 characters and "/", then a name of at most 63 characters
//     matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]); every value is at
//     most 63 characters of the same set and may be empty.
//
// # Differences from Kubernetes
//
//   - Kubernetes' lexer stops at a NUL byte as if the string ended there;
//     here a NUL byte is an ordinary character, so it fails validation
//     instead of silently truncating the selector.
//   - SelectorFromSet does not validate (as in Kubernetes); use
//     ValidatedSelectorFromSet when the set comes from a user.
//
// This package depends on nothing in package api except api/field (for
// Kubernetes-worded field errors); package api converts its LabelSelector
// with FromLabelSelector.
package labels
