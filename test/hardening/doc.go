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
// Files are named after the probe's finding they hold:
//
//	conn_test.go          20,000 idle connections, handshake-error logging,
//	                      AEAD-only TLS 1.2, a shutdown that cuts a slow client
//	patch_test.go         a huge strategic merge patch under concurrent writes
//	body_test.go          stalled and short bodies, the in-flight caps
//	dryrun_test.go        dryRun values other than All
//	datadir_test.go       missing, empty and damaged databases, the data dir
//	                      lock, backup and restore
//	authz_test.go         non-resource paths, the node authorizer, the node
//	                      API's dial target
//	regress_*.go          what held: the bad-input table, malformed DNS
//	                      packets, SIGKILL mid-storm, a full disk, TLS and
//	                      tokens
package hardening
