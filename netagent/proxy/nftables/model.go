package nftables

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// This file holds the small rule language the backend speaks. Every rule
// Skiff writes is a list of Exprs from the closed set below; the netlink
// encoder (netlink.go), the nft text renderer (String methods here), the fake
// (fake.go) and the packet tracer (trace.go) all interpret the same values,
// so what the tests trace is what the kernel gets.

// Family is an nftables address family: one table per family.
type Family uint8

const (
	// IPv4 is the "ip" family.
	IPv4 Family = 4
	// IPv6 is the "ip6" family.
	IPv6 Family = 6
)

// String is the nft family keyword.
func (f Family) String() string {
	if f == IPv6 {
		return "ip6"
	}
	return "ip"
}

func (f Family) addrType() DataType {
	if f == IPv6 {
		return TypeIPv6Addr
	}
	return TypeIPv4Addr
}

func (f Family) loopback() netip.Prefix {
	if f == IPv6 {
		return netip.MustParsePrefix("::1/128")
	}
	return netip.MustParsePrefix("127.0.0.0/8")
}

func (f Family) has(a netip.Addr) bool {
	if f == IPv6 {
		return a.Is6() && !a.Is4In6()
	}
	return a.Is4() || a.Is4In6()
}

// DataType is the type of one field of a set key or map value.
type DataType uint8

// The data types the backend uses.
const (
	TypeIPv4Addr DataType = iota + 1
	TypeIPv6Addr
	TypeInetProto
	TypeInetService
	TypeInteger // a numgen result (host byte order)
	TypeVerdict
)

func (t DataType) String() string {
	switch t {
	case TypeIPv4Addr:
		return "ipv4_addr"
	case TypeIPv6Addr:
		return "ipv6_addr"
	case TypeInetProto:
		return "inet_proto"
	case TypeInetService:
		return "inet_service"
	case TypeInteger:
		return "integer"
	case TypeVerdict:
		return "verdict"
	}
	return "invalid"
}

// size is the field's length in a concatenation (padded to 4 bytes).
func (t DataType) size() int {
	switch t {
	case TypeIPv6Addr:
		return 16
	default:
		return 4
	}
}

// Proto is an IP protocol number.
type Proto uint8

// Protocols Services may use.
const (
	ProtoTCP  Proto = 6
	ProtoUDP  Proto = 17
	ProtoSCTP Proto = 132
)

func (p Proto) String() string {
	switch p {
	case ProtoTCP:
		return "tcp"
	case ProtoUDP:
		return "udp"
	case ProtoSCTP:
		return "sctp"
	}
	return strconv.Itoa(int(p))
}

// ParseProto maps a Service protocol ("TCP", "udp", ...) to its number.
func ParseProto(s string) (Proto, bool) {
	switch strings.ToLower(s) {
	case "tcp", "":
		return ProtoTCP, true
	case "udp":
		return ProtoUDP, true
	case "sctp":
		return ProtoSCTP, true
	}
	return 0, false
}

// Val is one field of a set element's key or value.
type Val struct {
	Type DataType
	Addr netip.Addr // TypeIPv4Addr, TypeIPv6Addr
	Num  uint32     // TypeInetProto, TypeInetService, TypeInteger
}

// AddrVal, ProtoVal, PortVal and IntVal build Vals.
func AddrVal(a netip.Addr) Val {
	if a.Is4() || a.Is4In6() {
		return Val{Type: TypeIPv4Addr, Addr: a.Unmap()}
	}
	return Val{Type: TypeIPv6Addr, Addr: a}
}

// ProtoVal is an inet_proto field.
func ProtoVal(p Proto) Val { return Val{Type: TypeInetProto, Num: uint32(p)} }

// PortVal is an inet_service field.
func PortVal(p uint16) Val { return Val{Type: TypeInetService, Num: uint32(p)} }

// IntVal is an integer field (a numgen result).
func IntVal(n uint32) Val { return Val{Type: TypeInteger, Num: n} }

func (v Val) String() string {
	switch v.Type {
	case TypeIPv4Addr, TypeIPv6Addr:
		return v.Addr.String()
	case TypeInetProto:
		return Proto(v.Num).String()
	default:
		return strconv.FormatUint(uint64(v.Num), 10)
	}
}

func valsString(vs []Val) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, " . ")
}

// VerdictKind is what a verdict does.
type VerdictKind uint8

// Verdict kinds.
const (
	VerdictAccept VerdictKind = iota + 1
	VerdictDrop
	VerdictReturn
	VerdictJump
	VerdictGoto
)

// Verdict is a rule's (or a verdict map element's) final statement.
type Verdict struct {
	Kind  VerdictKind
	Chain string // Jump, Goto
}

// Jump, Goto, Drop and Return are shorthands.
func Jump(chain string) *Verdict { return &Verdict{Kind: VerdictJump, Chain: chain} }

// Goto is a goto verdict.
func Goto(chain string) *Verdict { return &Verdict{Kind: VerdictGoto, Chain: chain} }

// Drop is the drop verdict.
func Drop() *Verdict { return &Verdict{Kind: VerdictDrop} }

// Return is the return verdict.
func Return() *Verdict { return &Verdict{Kind: VerdictReturn} }

func (v *Verdict) String() string {
	switch v.Kind {
	case VerdictAccept:
		return "accept"
	case VerdictDrop:
		return "drop"
	case VerdictReturn:
		return "return"
	case VerdictJump:
		return "jump " + v.Chain
	case VerdictGoto:
		return "goto " + v.Chain
	}
	return "invalid"
}

func (v *Verdict) render(Family) string { return v.String() }

// Element is one set or map element.
type Element struct {
	Key     []Val
	Value   []Val    // data maps
	Verdict *Verdict // verdict maps
	// Timeout is only read back from dynamic sets (affinity).
	Timeout time.Duration
}

// KeyString identifies the element inside its set.
func (e Element) KeyString() string { return valsString(e.Key) }

func (e Element) String() string {
	s := valsString(e.Key)
	switch {
	case e.Verdict != nil:
		s += " : " + e.Verdict.String()
	case len(e.Value) > 0:
		s += " : " + valsString(e.Value)
	}
	return s
}

func (e Element) sameValue(o Element) bool {
	if (e.Verdict == nil) != (o.Verdict == nil) {
		return false
	}
	if e.Verdict != nil && *e.Verdict != *o.Verdict {
		return false
	}
	return valsString(e.Value) == valsString(o.Value)
}

// Set is a named set, data map or verdict map.
type Set struct {
	Name  string
	Key   []DataType
	Value []DataType // nil: a plain set; {TypeVerdict}: a verdict map
	// Timeout > 0 makes a dynamic set whose elements expire (affinity).
	Timeout time.Duration
}

// IsMap reports whether the set maps keys to values.
func (s *Set) IsMap() bool { return len(s.Value) > 0 }

func (s *Set) kind() string {
	if s.IsMap() {
		return "map"
	}
	return "set"
}

func (s *Set) sameSpec(o *Set) bool {
	return s.Name == o.Name && fmt.Sprint(s.Key) == fmt.Sprint(o.Key) &&
		fmt.Sprint(s.Value) == fmt.Sprint(o.Value) && s.Timeout == o.Timeout
}

// spec renders the body of an "add set/map" statement.
func (s *Set) spec(f Family) string {
	var b strings.Builder
	b.WriteString("{ ")
	if len(s.Key) == 1 && s.Key[0] == TypeInteger {
		// nft cannot name a bare integer type: describe it by expression.
		b.WriteString("typeof numgen random mod 1 : ")
		b.WriteString(f.String() + " daddr . tcp dport")
	} else {
		b.WriteString("type ")
		b.WriteString(typesString(s.Key))
		if s.IsMap() {
			b.WriteString(" : " + typesString(s.Value))
		}
	}
	b.WriteString(" ;")
	if s.Timeout > 0 {
		fmt.Fprintf(&b, " flags dynamic,timeout ; timeout %ds ;", int64(s.Timeout/time.Second))
	}
	b.WriteString(" }")
	return b.String()
}

func typesString(ts []DataType) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, " . ")
}

// BaseChain attaches a chain to a netfilter hook.
type BaseChain struct {
	Type     string // "filter" or "nat"
	Hook     string // "prerouting", "input", "forward", "output", "postrouting"
	Priority int32
}

// Chain is a chain with its rules.
type Chain struct {
	Name  string
	Base  *BaseChain // nil for a regular chain
	Rules []Rule
}

func (c *Chain) spec() string {
	if c.Base == nil {
		return ""
	}
	return fmt.Sprintf(" { type %s hook %s priority %d ; }", c.Base.Type, c.Base.Hook, c.Base.Priority)
}

// Rule is a list of expressions evaluated left to right.
type Rule struct {
	Exprs []Expr
}

// R builds a rule.
func R(exprs ...Expr) Rule { return Rule{Exprs: exprs} }

// Render is the rule in nft syntax.
func (r Rule) Render(f Family) string {
	parts := make([]string, 0, len(r.Exprs))
	for _, e := range r.Exprs {
		parts = append(parts, e.render(f))
	}
	return strings.Join(parts, " ")
}

func rulesEqual(f Family, a, b []Rule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Render(f) != b[i].Render(f) {
			return false
		}
	}
	return true
}

// Expr is one match or statement of a rule.
type Expr interface {
	render(f Family) string
}

// KeyField is a packet field used in a set lookup key.
type KeyField uint8

// Key fields.
const (
	FieldSaddr KeyField = iota + 1
	FieldDaddr
	FieldL4Proto
	FieldDport
)

func (k KeyField) render(f Family) string {
	switch k {
	case FieldSaddr:
		return f.String() + " saddr"
	case FieldDaddr:
		return f.String() + " daddr"
	case FieldL4Proto:
		return "meta l4proto"
	case FieldDport:
		return "th dport"
	}
	return "?"
}

func (k KeyField) dataType(f Family) DataType {
	switch k {
	case FieldSaddr, FieldDaddr:
		return f.addrType()
	case FieldL4Proto:
		return TypeInetProto
	default:
		return TypeInetService
	}
}

func fieldsString(f Family, ks []KeyField) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k.render(f)
	}
	return strings.Join(parts, " . ")
}

// MatchAddr matches the source or destination address against a prefix.
type MatchAddr struct {
	Src    bool
	Not    bool
	Prefix netip.Prefix
}

func (m MatchAddr) render(f Family) string {
	s := f.String() + " daddr "
	if m.Src {
		s = f.String() + " saddr "
	}
	if m.Not {
		s += "!= "
	}
	if m.Prefix.IsSingleIP() {
		return s + m.Prefix.Addr().String()
	}
	return s + m.Prefix.String()
}

// MatchDport matches the L4 protocol and destination port ("tcp dport 80").
type MatchDport struct {
	Proto Proto
	Port  uint16
}

func (m MatchDport) render(Family) string {
	return fmt.Sprintf("%s dport %d", m.Proto, m.Port)
}

// MatchFibLocal matches when the address is local to this netns
// ("fib daddr type local").
type MatchFibLocal struct{ Src bool }

func (m MatchFibLocal) render(Family) string {
	if m.Src {
		return "fib saddr type local"
	}
	return "fib daddr type local"
}

// MatchCtNew matches the first packet of a connection ("ct state new").
type MatchCtNew struct{}

func (MatchCtNew) render(Family) string { return "ct state new" }

// MatchCtDNAT matches connections that were DNATed ("ct status dnat").
type MatchCtDNAT struct{}

func (MatchCtDNAT) render(Family) string { return "ct status dnat" }

// MatchMarkClear matches when the mark bits are all clear
// ("meta mark & 0x4000 == 0").
type MatchMarkClear struct{ Bits uint32 }

func (m MatchMarkClear) render(Family) string {
	return fmt.Sprintf("meta mark & %#08x == 0", m.Bits)
}

// MatchSet matches when the concatenated fields are in a set.
type MatchSet struct {
	Fields []KeyField
	Set    string
}

func (m MatchSet) render(f Family) string {
	return fieldsString(f, m.Fields) + " @" + m.Set
}

// SetMark sets (Xor false: mark | Bits) or toggles (Xor: mark ^ Bits) bits.
type SetMark struct {
	Bits uint32
	Xor  bool
}

func (m SetMark) render(Family) string {
	op := "|"
	if m.Xor {
		op = "^"
	}
	return fmt.Sprintf("meta mark set meta mark %s %#08x", op, m.Bits)
}

// VMap looks the concatenated fields up in a verdict map.
type VMap struct {
	Fields []KeyField
	Map    string
}

func (m VMap) render(f Family) string {
	return fieldsString(f, m.Fields) + " vmap @" + m.Map
}

// Reject answers with ICMP port unreachable.
type Reject struct{}

func (Reject) render(Family) string { return "reject" }

// Masquerade SNATs to the outgoing interface's address.
type Masquerade struct{}

func (Masquerade) render(Family) string { return "masquerade fully-random" }

// DNATRandom picks one of Mod endpoints at random: the endpoint with key
// Offset+i (i = numgen random mod Mod) in the endpoint map Map.
type DNATRandom struct {
	Proto       Proto
	Map         string
	Mod, Offset uint32
}

func (d DNATRandom) render(f Family) string {
	return fmt.Sprintf("meta l4proto %s dnat %s addr . port to numgen random mod %d offset %d map @%s", d.Proto, f, d.Mod, d.Offset, d.Map)
}

// MatchNumgen matches when a fresh random number mod Mod equals Value
// ("numgen random mod 3 == 0").
type MatchNumgen struct{ Mod, Value uint32 }

func (m MatchNumgen) render(Family) string {
	return fmt.Sprintf("numgen random mod %d == %d", m.Mod, m.Value)
}

// UpdateSaddr adds the source address to a dynamic set, or refreshes its
// timeout ("update @set { ip saddr }").
type UpdateSaddr struct{ Set string }

func (u UpdateSaddr) render(f Family) string {
	return fmt.Sprintf("update @%s { %s saddr }", u.Set, f)
}

// DNATTo sends the packet to one endpoint
// ("meta l4proto tcp dnat ip to 10.244.0.2:8080").
type DNATTo struct {
	Proto    Proto
	Endpoint netip.AddrPort
}

func (d DNATTo) render(f Family) string {
	return fmt.Sprintf("meta l4proto %s dnat %s to %s", d.Proto, f, d.Endpoint)
}

// referenced returns the chains and sets an expression refers to.
func exprRefs(e Expr) (chains, sets []string) {
	switch x := e.(type) {
	case *Verdict:
		if x.Kind == VerdictJump || x.Kind == VerdictGoto {
			chains = append(chains, x.Chain)
		}
	case MatchSet:
		sets = append(sets, x.Set)
	case VMap:
		sets = append(sets, x.Map)
	case DNATRandom:
		sets = append(sets, x.Map)
	case UpdateSaddr:
		sets = append(sets, x.Set)
	}
	return chains, sets
}
