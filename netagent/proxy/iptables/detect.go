package iptables

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// Mode is the iptables backend the host uses.
type Mode string

// The two iptables backends.
const (
	ModeNFT    Mode = "nft"    // iptables-nft: rules in nf_tables
	ModeLegacy Mode = "legacy" // iptables-legacy: x_tables blobs
)

// Tool names one of the mode's binaries: t is "iptables",
// "iptables-restore" or "iptables-save" (iptables-nft-restore, ...). Other
// proxy modes that need a few iptables rules (ipvs) use it.
func (m Mode) Tool(t string) string { return m.tool(t) }

// tool names the binaries of one mode.
func (m Mode) tool(t string) string {
	// t is "iptables", "iptables-restore" or "iptables-save".
	base, rest, _ := strings.Cut(t, "-")
	if rest == "" {
		return base + "-" + string(m)
	}
	return base + "-" + string(m) + "-" + rest
}

// hintChains are the mangle chains that mark the backend in use: kubelet
// and kube-proxy create KUBE-IPTABLES-HINT (and older ones
// KUBE-KUBELET-CANARY); Skiff writes KUBE-IPTABLES-HINT too.
var hintChains = []string{":KUBE-IPTABLES-HINT ", ":KUBE-KUBELET-CANARY "}

// Detect picks the backend the host already uses, as Kubernetes' iptables
// wrapper does:
//
//  1. the mode whose mangle table holds a hint chain (nft first);
//  2. else the mode with more rules (iptables-legacy-save vs
//     iptables-nft-save, counting "-A" lines);
//  3. else (no rules anywhere) the one `iptables --version` names;
//  4. else nft.
//
// It reads the rules once, at start; the sync loop never does.
func Detect(ctx context.Context, ex Exec) (Mode, error) {
	for _, m := range []Mode{ModeNFT, ModeLegacy} {
		out, err := ex.Run(ctx, nil, m.tool("iptables-save"), "-t", "mangle")
		if err != nil {
			continue // not installed, or no such table: no hint
		}
		for _, h := range hintChains {
			if bytes.Contains(out, []byte(h)) {
				return m, nil
			}
		}
	}
	count := map[Mode]int{}
	for _, m := range []Mode{ModeNFT, ModeLegacy} {
		out, err := ex.Run(ctx, nil, m.tool("iptables-save"))
		if err != nil {
			continue
		}
		for line := range bytes.Lines(out) {
			if bytes.HasPrefix(line, []byte("-A ")) {
				count[m]++
			}
		}
	}
	switch {
	case count[ModeLegacy] > count[ModeNFT]:
		return ModeLegacy, nil
	case count[ModeNFT] > count[ModeLegacy]:
		return ModeNFT, nil
	}
	out, err := ex.Run(ctx, nil, "iptables", "--version")
	if err != nil {
		return ModeNFT, nil
	}
	switch v := string(out); {
	case strings.Contains(v, "(legacy)"):
		return ModeLegacy, nil
	case strings.Contains(v, "(nf_tables)"):
		return ModeNFT, nil
	}
	return ModeNFT, nil
}

// ParseMode accepts "nft", "legacy" or "" / "auto" (detect).
func ParseMode(s string) (Mode, bool, error) {
	switch s {
	case "", "auto":
		return "", true, nil
	case "nft", "nf_tables":
		return ModeNFT, false, nil
	case "legacy":
		return ModeLegacy, false, nil
	}
	return "", false, fmt.Errorf("iptables: unknown mode %q (want nft, legacy or auto)", s)
}
