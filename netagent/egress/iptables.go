package egress

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
)

// Chain is the nat chain of the iptables rules.
const Chain = "SKIFF-EGRESS"

// jumpSpec is the POSTROUTING rule that sends traffic to Chain.
var jumpSpec = []string{"-m", "comment", "--comment", "skiff-egress", "-j", Chain}

// IPTables programs the rules with the iptables tools of Mode (iptables-nft
// or iptables-legacy, as iptables.Detect picks), run through Exec.
type IPTables struct {
	Exec iptables.Exec
	Mode iptables.Mode
}

// iptablesLines are the chain's rules as `iptables -S` prints them.
func (c Config) iptablesLines() []string {
	return []string{
		fmt.Sprintf("-A %s ! -s %s -j RETURN", Chain, c.PodCIDR),
		fmt.Sprintf("-A %s -d %s -m comment --comment \"pod to pod keeps its source\" -j RETURN", Chain, c.ClusterCIDR),
		fmt.Sprintf("-A %s -d %s -j RETURN", Chain, c.multicast()),
		fmt.Sprintf("-A %s -m comment --comment \"pods leaving the cluster\" -j MASQUERADE --random-fully", Chain),
	}
}

// iptablesRules is the chain's content as iptables-restore input.
func (c Config) iptablesRules() string {
	var b strings.Builder
	fmt.Fprintf(&b, "*nat\n:%s - [0:0]\n", Chain)
	for _, l := range c.iptablesLines() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// Ensure writes the chain (replacing what it held) and adds the
// POSTROUTING jump when it is missing. When both are already as wanted it
// writes nothing: with iptables-nft every write makes the kernel check the
// whole nat table, which takes ~150 ms at 10k Services (the iptables
// proxy's README), and Ensure runs every minute.
func (b IPTables) Ensure(ctx context.Context, c Config) error {
	c, err := c.normalize()
	if err != nil {
		return err
	}
	if !c.PodCIDR.Addr().Is4() {
		return fmt.Errorf("egress: podCIDR %s: only IPv4 pod ranges are masqueraded", c.PodCIDR)
	}
	rules, exists, err := b.chainRules(ctx)
	if err != nil {
		return err
	}
	has := false
	if exists { // -C of a jump to a missing chain is an error, not a no
		if has, err = b.hasJump(ctx); err != nil {
			return err
		}
	}
	if has && slices.Equal(rules, c.iptablesLines()) {
		return nil
	}
	if _, err := b.Exec.Run(ctx, []byte(c.iptablesRules()), b.Mode.Tool("iptables-restore"), "-w", "--noflush"); err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	if !has {
		if _, err := b.iptables(ctx, append([]string{"-A", "POSTROUTING"}, jumpSpec...)...); err != nil {
			return fmt.Errorf("egress: %w", err)
		}
	}
	return nil
}

// chainRules returns Chain's rules as `iptables -S` prints them, and
// whether it exists.
func (b IPTables) chainRules(ctx context.Context) ([]string, bool, error) {
	out, err := b.iptables(ctx, "-S", Chain)
	if isNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("egress: %w", err)
	}
	var rules []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(l, "-A ") {
			rules = append(rules, strings.TrimSpace(l))
		}
	}
	return rules, true, nil
}

// Remove deletes the jump and the chain; what is not there is fine.
func (b IPTables) Remove(ctx context.Context) error {
	if _, exists, err := b.chainRules(ctx); err != nil || !exists {
		return err // no chain, so no jump to it either
	}
	for {
		has, err := b.hasJump(ctx)
		if err != nil {
			return err
		}
		if !has {
			break
		}
		if _, err := b.iptables(ctx, append([]string{"-D", "POSTROUTING"}, jumpSpec...)...); err != nil {
			return fmt.Errorf("egress: %w", err)
		}
	}
	in := fmt.Sprintf("*nat\n:%s - [0:0]\n-X %s\nCOMMIT\n", Chain, Chain)
	if _, err := b.Exec.Run(ctx, []byte(in), b.Mode.Tool("iptables-restore"), "-w", "--noflush"); err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	return nil
}

func (b IPTables) hasJump(ctx context.Context) (bool, error) {
	_, err := b.iptables(ctx, append([]string{"-C", "POSTROUTING"}, jumpSpec...)...)
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("egress: %w", err)
}

func (b IPTables) iptables(ctx context.Context, args ...string) ([]byte, error) {
	return b.Exec.Run(ctx, nil, b.Mode.Tool("iptables"), append([]string{"-w", "-t", "nat"}, args...)...)
}

// isNotFound: iptables exits 1 for a missing rule or chain.
func isNotFound(err error) bool {
	var ee *iptables.ExitError
	return errors.As(err, &ee) && ee.Code == 1
}

// Rules reads the rules back (for `skiff trace`): the POSTROUTING jump and
// the chain's rules as `iptables -S` prints them; none when they are not
// there.
func (b IPTables) Rules(ctx context.Context) ([]string, error) {
	rules, exists, err := b.chainRules(ctx)
	if err != nil || !exists {
		return nil, err
	}
	has, err := b.hasJump(ctx)
	if err != nil {
		return nil, err
	}
	if !has {
		return nil, nil // a chain nothing jumps to does nothing
	}
	return append([]string{"-A POSTROUTING " + strings.Join(jumpSpec, " ")}, rules...), nil
}
