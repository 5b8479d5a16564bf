// Package hardening is the regression suite of what an outside probe broke
// and what it found holding, run against real servers on loopback: each
// test reproduces one attack or accident (connection exhaustion, a patch
// that stalls the commit loop, stalled bodies, a missing or corrupted
// database, a second server on one data dir, authorization gaps, bad input,
// malformed DNS packets, SIGKILL mid-storm) and asserts the behaviour the
// server now has. docs/operating.md's security section says what each
// credential may do; these tests hold it to that.
//
// Every loop is bounded and every address is loopback. The suite runs in
// `make test` (through `go test ./...`).
//
// Files are named after the probe's finding they hold: conn_test.go
// (connections, TLS, shutdown), patch_test.go, body_test.go, dryrun_test.go,
// datadir_test.go, authz_test.go, regress_test.go.
package hardening
