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
