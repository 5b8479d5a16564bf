// Package jsonpath evaluates the JSONPath templates of `skiff get -o
// jsonpath=...`, the subset of Kubernetes' JSONPath (k8s.io/client-go
// util/jsonpath) that kubectl users write, without depending on k8s.io
// modules.
//
// # Syntax
//
// A template is literal text with expressions in braces:
//
//	{.metadata.name}                       a field ($ and @ may start a path)
//	{.items[*].metadata.name}              every element of a list
//	{.items[0].x} {.items[-1].x}           an index (negative from the end)
//	{.items[1:3].x}                        a slice [start:end:step]
//	{.metadata.labels.kubernetes\.io/name} a key holding dots (escaped)
//	{.metadata.labels['app.kubernetes.io/name']}
//	{.status.conditions[?(@.type=="Ready")].status}
//	                                       a filter (==, !=, <, <=, >, >=,
//	                                       or a bare path: exists)
//	{..image}                              recursive descent
//	{range .items[*]}{.metadata.name}{"\n"}{end}
//	{"\t"} {'text'}                        string literals (Go escapes in "")
//
// # Output
//
//   - The values one expression yields are joined by a space. Strings print
//     raw, numbers as written (decode input with json.Decoder.UseNumber to
//     keep them exact), objects and lists as compact JSON, null as nothing.
//   - A missing key yields nothing (kubectl's default
//     --allow-missing-template-keys=true); Execute never fails on data, only
//     Parse fails, on a malformed template.
//   - Map keys are visited in sorted order, so output is deterministic.
package jsonpath
