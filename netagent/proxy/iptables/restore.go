package iptables

import (
	"bytes"
	"strings"
)

// block is one table section of an iptables-restore input, committed as
// one transaction: chain declarations (which create or flush a chain, as
// --noflush restores do) and then the command lines, in order.
type block struct {
	table string
	decls []string
	lines []string
}

func (b *block) declare(chain string) { b.decls = append(b.decls, chain) }

// declareInline declares chain among the command lines, where it stands
// (iptables-restore takes chain lines anywhere in a table block).
func (b *block) declareInline(chain string) { b.lines = append(b.lines, ":"+chain+" - [0:0]") }

func (b *block) add(op string, r rule) {
	b.lines = append(b.lines, op+" "+r.chain+" "+r.spec())
}

func (b *block) append(r rule) { b.add("-A", r) }

func (b *block) deleteChain(chain string) { b.lines = append(b.lines, "-X "+chain) }

func (b *block) empty() bool { return len(b.decls) == 0 && len(b.lines) == 0 }

// payload is a whole restore input: blocks in order.
type payload struct {
	blocks []*block
}

func (p *payload) newBlock(table string) *block {
	b := &block{table: table}
	p.blocks = append(p.blocks, b)
	return b
}

// bytes renders the input. Empty blocks are left out.
func (p *payload) bytes() []byte {
	var buf bytes.Buffer
	for _, b := range p.blocks {
		if b.empty() {
			continue
		}
		writeBlock(&buf, b)
	}
	return buf.Bytes()
}

func writeBlock(buf *bytes.Buffer, b *block) {
	buf.WriteString("*")
	buf.WriteString(b.table)
	buf.WriteByte('\n')
	for _, c := range b.decls {
		buf.WriteString(":")
		buf.WriteString(c)
		buf.WriteString(" - [0:0]\n")
	}
	for _, l := range b.lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	buf.WriteString("COMMIT\n")
}

// blockBytes renders one block alone (to compare filter contents).
func blockBytes(b *block) []byte {
	var buf bytes.Buffer
	writeBlock(&buf, b)
	return buf.Bytes()
}

// lines counts the rule lines of a payload (for logs and metrics).
func (p *payload) lines() int {
	n := 0
	for _, b := range p.blocks {
		for _, l := range b.lines {
			if strings.HasPrefix(l, "-A ") || strings.HasPrefix(l, "-I ") {
				n++
			}
		}
	}
	return n
}
