// Package printers turns Skiff's API objects into the rows of a
// meta.k8s.io/v1 Table: the columns kubectl prints for each resource
// (server-side printing), computed the way Kubernetes'
// pkg/printers/internalversion computes them, so that `kubectl get` against
// Skiff and `skiff get` print the same text as against Kubernetes.
//
// # Columns
//
// For each resource, For returns its column definitions and a row function.
// Columns with Priority 0 are the default output; Priority 1 columns are
// added by `-o wide`. Rows always carry every column's cell, as the
// Kubernetes API server's printers do (they run with Wide set): the client
// hides the priority-1 cells. A resource without its own printer gets NAME
// and AGE.
//
// # Cells
//
// A cell is a string, an int64 or a bool. Ages are relative to the now passed
// in and formatted by HumanDuration ("5s", "3m2s", "4h", "2d3h"); a missing
// timestamp prints "<unknown>". Empty lists print "<none>" (or "<unset>" for
// an EndpointSlice's ports and endpoints), as kubectl does.
//
// # Invariants
//
// Every row has exactly len(Columns) cells. The functions are pure: they read
// the object and now and nothing else, so tests can pin the clock.
package printers
