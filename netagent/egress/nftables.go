package egress

import (
	"context"
	"errors"
	"fmt"

	"github.com/skiff-dev/skiff/netagent/proxy/nftables"
)

// Table is the nftables table of the rules (family ip, or ip6 for an IPv6
// pod range).
const Table = "skiff-egress"

// postrouting is the table's one chain.
var postrouting = &nftables.Chain{
	Name: "postrouting",
	Base: &nftables.BaseChain{Type: "nat", Hook: "postrouting", Priority: 100}, // srcnat
}

// NFTables programs the rules through an nftables.Kernel (the proxy's
// netlink one in the agent).
type NFTables struct {
	Kernel nftables.Kernel
}

// chainReader is the part of nftables.Netlink (and its Fake) that reads a
// chain's rules back.
type chainReader interface {
	ChainRules(ctx context.Context, f nftables.Family, table, chain string) ([]string, error)
}

func family(c Config) nftables.Family {
	if c.PodCIDR.Addr().Is4() {
		return nftables.IPv4
	}
	return nftables.IPv6
}

// Ensure creates the table and chain when missing and replaces the chain's
// rules, in one transaction.
func (b NFTables) Ensure(ctx context.Context, c Config) error {
	c, err := c.normalize()
	if err != nil {
		return err
	}
	tx := &nftables.Transaction{Family: family(c), Table: Table, Ops: []nftables.Op{
		nftables.AddTable{},
		nftables.AddChain{Chain: postrouting},
		nftables.FlushChain{Name: postrouting.Name},
	}}
	for _, r := range []nftables.Rule{
		nftables.R(nftables.MatchAddr{Src: true, Not: true, Prefix: c.PodCIDR}, nftables.Return()),
		nftables.R(nftables.MatchAddr{Prefix: c.ClusterCIDR}, nftables.Return()),
		nftables.R(nftables.MatchAddr{Prefix: c.multicast()}, nftables.Return()),
		nftables.R(nftables.Masquerade{}),
	} {
		tx.Ops = append(tx.Ops, nftables.AddRule{Chain: postrouting.Name, Rule: r})
	}
	if err := b.Kernel.Run(ctx, tx); err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	return nil
}

// Remove deletes the tables of both families; what is not there is fine.
func (b NFTables) Remove(ctx context.Context) error {
	for _, f := range []nftables.Family{nftables.IPv4, nftables.IPv6} {
		if _, _, err := b.Kernel.List(ctx, f, Table); errors.Is(err, nftables.ErrNoTable) {
			continue
		} else if err != nil {
			return fmt.Errorf("egress: %w", err)
		}
		tx := &nftables.Transaction{Family: f, Table: Table, Ops: []nftables.Op{nftables.DeleteTable{}}}
		if err := b.Kernel.Run(ctx, tx); err != nil {
			return fmt.Errorf("egress: %w", err)
		}
	}
	return nil
}

// Rules reads the rules back (for `skiff trace`), prefixed with their
// table and chain; none when they are not there. A Kernel that cannot read
// rules is an error.
func (b NFTables) Rules(ctx context.Context) ([]string, error) {
	r, ok := b.Kernel.(chainReader)
	if !ok {
		return nil, fmt.Errorf("egress: %T cannot read rules back", b.Kernel)
	}
	var out []string
	for _, f := range []nftables.Family{nftables.IPv4, nftables.IPv6} {
		rules, err := r.ChainRules(ctx, f, Table, postrouting.Name)
		if errors.Is(err, nftables.ErrNoTable) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("egress: %w", err)
		}
		for _, rule := range rules {
			out = append(out, fmt.Sprintf("%s %s %s: %s", f, Table, postrouting.Name, rule))
		}
	}
	return out, nil
}
