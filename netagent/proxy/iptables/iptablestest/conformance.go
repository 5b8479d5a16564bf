package iptablestest

import (
	"fmt"

	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// Result is the outcome as the conformance table (proxytest.Cases) states
// outcomes: the iptables and ipvs backends' tests both map their traces
// through it.
func (o Outcome) Result() (proxytest.Result, error) {
	r := proxytest.Result{Masquerade: o.Masquerade}
	switch {
	case o.Verdict == "ACCEPT" && o.DNAT:
		r.Verdict, r.Endpoint = proxytest.VerdictDNAT, o.Dst
	case o.Verdict == "ACCEPT":
		r.Verdict = proxytest.VerdictAccept
	case o.Verdict == "DROP":
		r.Verdict = proxytest.VerdictDrop
	case o.Verdict == "REJECT":
		r.Verdict = proxytest.VerdictReject
	default:
		return r, fmt.Errorf("verdict %q", o.Verdict)
	}
	return r, nil
}
