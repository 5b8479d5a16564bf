// Package fields parses and matches Kubernetes field selectors
// (metadata.name=x,spec.nodeName!=y).
//
// The grammar and wording follow k8s.io/apimachinery/pkg/fields:
//
//	selector = "" | term { "," term }
//	term     = field ( "=" | "==" | "!=" ) value
//
// A field name is every byte before the first operator of its term (it is
// not unescaped); a value may contain "\,", "\=" and "\\" for a literal
// comma, equals sign and backslash, and no other escape, unescaped comma or
// unescaped equals sign. Whitespace is not trimmed (as in Kubernetes), so
// "a = b" names the field "a " and the server rejects it as unsupported.
// Empty terms ("a=b,,c=d") are skipped.
//
// # Invariants
//
//   - A Selector returned by this package is never nil and is immutable; it
//     is safe for concurrent use.
//   - A field missing from the matched set has the value "": "a=" matches a
//     set without a, and "a!=x" matches it too.
//   - String is canonical: terms sorted by their rendered text, "==" written
//     as "=", values escaped with EscapeValue. For every s that Parse
//     accepts, Parse(sel.String()) succeeds and yields an equal selector
//     (FuzzParseFields checks this).
//   - Fields lists each field name once, sorted, so the API server can
//     reject field names a resource does not support before matching.
//
// # Differences from Kubernetes
//
//   - An unescaped comma or equals sign in a value is reported as the
//     character ("unescaped character in value: '='"), where Kubernetes
//     prints its code point.
package fields
