package nftables

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Transaction is an ordered list of operations on one table, applied by
// a Kernel atomically: all of them or none.
type Transaction struct {
	Family Family
	Table  string
	Ops    []Op
}

// Op is one operation of a Transaction.
type Op interface {
	opString(f Family, table string) string
}

// AddTable creates the table if it does not exist.
type AddTable struct{}

// DeleteTable removes the table and everything in it.
type DeleteTable struct{}

// AddChain creates the chain if it does not exist (its rules are not
// part of the op: see AddRule).
type AddChain struct{ Chain *Chain }

// FlushChain removes every rule of a chain.
type FlushChain struct{ Name string }

// DeleteChain removes an empty, unreferenced chain.
type DeleteChain struct{ Name string }

// AddRule appends a rule to a chain.
type AddRule struct {
	Chain string
	Rule  Rule
}

// AddSet creates the set if it does not exist (with the same spec).
type AddSet struct{ Set *Set }

// FlushSet removes every element of a set.
type FlushSet struct{ Set *Set }

// DeleteSet removes an unreferenced set.
type DeleteSet struct{ Set *Set }

// AddElements adds elements to a set.
type AddElements struct {
	Set      *Set
	Elements []Element
}

// DeleteElements removes elements (by key) from a set.
type DeleteElements struct {
	Set      *Set
	Elements []Element
}

func (AddTable) opString(f Family, t string) string { return fmt.Sprintf("add table %s %s", f, t) }
func (DeleteTable) opString(f Family, t string) string {
	return fmt.Sprintf("delete table %s %s", f, t)
}
func (o AddChain) opString(f Family, t string) string {
	return fmt.Sprintf("add chain %s %s %s%s", f, t, o.Chain.Name, o.Chain.spec())
}
func (o FlushChain) opString(f Family, t string) string {
	return fmt.Sprintf("flush chain %s %s %s", f, t, o.Name)
}
func (o DeleteChain) opString(f Family, t string) string {
	return fmt.Sprintf("delete chain %s %s %s", f, t, o.Name)
}
func (o AddRule) opString(f Family, t string) string {
	return fmt.Sprintf("add rule %s %s %s %s", f, t, o.Chain, o.Rule.Render(f))
}
func (o AddSet) opString(f Family, t string) string {
	return fmt.Sprintf("add %s %s %s %s %s", o.Set.kind(), f, t, o.Set.Name, o.Set.spec(f))
}
func (o FlushSet) opString(f Family, t string) string {
	return fmt.Sprintf("flush %s %s %s %s", o.Set.kind(), f, t, o.Set.Name)
}
func (o DeleteSet) opString(f Family, t string) string {
	return fmt.Sprintf("delete %s %s %s %s", o.Set.kind(), f, t, o.Set.Name)
}
func (o AddElements) opString(f Family, t string) string {
	parts := make([]string, len(o.Elements))
	for i, e := range o.Elements {
		parts[i] = e.String()
	}
	return fmt.Sprintf("add element %s %s %s { %s }", f, t, o.Set.Name, strings.Join(parts, ", "))
}
func (o DeleteElements) opString(f Family, t string) string {
	parts := make([]string, len(o.Elements))
	for i, e := range o.Elements {
		parts[i] = e.KeyString()
	}
	return fmt.Sprintf("delete element %s %s %s { %s }", f, t, o.Set.Name, strings.Join(parts, ", "))
}

// String renders the transaction as an nft script (one command a line)
// that `nft -f` accepts.
func (tx *Transaction) String() string {
	var b strings.Builder
	for _, op := range tx.Ops {
		b.WriteString(op.opString(tx.Family, tx.Table))
		b.WriteByte('\n')
	}
	return b.String()
}

// SetInfo describes a set that exists in the kernel.
type SetInfo struct {
	Name string
	Set  *Set // as far as the kernel reports it (Timeout for dynamic sets)
}

// ErrNoTable is returned by Kernel.List when the table does not exist.
var ErrNoTable = errors.New("nftables: no such table")

// Kernel is everything the backend needs from nftables. The real ones are
// NewNetlink (netlink, one lasting socket) and NewExec (the nft binary); the
// fake is NewFake.
type Kernel interface {
	// Run applies the transaction atomically.
	Run(ctx context.Context, tx *Transaction) error
	// List returns the names of the chains and the sets of a table, or
	// ErrNoTable.
	List(ctx context.Context, family Family, table string) (chains []string, sets []SetInfo, err error)
}
