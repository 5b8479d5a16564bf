package api

import (
	"encoding/json"
	"errors"
	"math/big"
	"regexp"
	"strings"
)

// Quantity is a resource amount in Kubernetes notation ("100m", "64Mi",
// "1.5", "2e3"). It is kept as the text the user wrote; ParseQuantity gives
// its value. In JSON it is a string, and a JSON number is accepted too
// (YAML `cpu: 1` arrives as a number).
type Quantity string

// ResourceList maps a resource name (cpu, memory, ...) to an amount.
type ResourceList map[string]Quantity

// MarshalJSON implements json.Marshaler.
func (q Quantity) MarshalJSON() ([]byte, error) { return json.Marshal(string(q)) }

// UnmarshalJSON implements json.Unmarshaler.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*q = Quantity(s)
		return nil
	}
	if string(b) == "null" {
		*q = ""
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("quantities must be a string or a number")
	}
	*q = Quantity(n.String())
	return nil
}

// ErrQuantityFormat is Kubernetes' message for a malformed quantity.
var ErrQuantityFormat = errors.New("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")

var quantityRE = regexp.MustCompile(`^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$`)

var quantitySuffix = map[string]*big.Rat{
	"":   big.NewRat(1, 1),
	"n":  big.NewRat(1, 1_000_000_000),
	"u":  big.NewRat(1, 1_000_000),
	"m":  big.NewRat(1, 1_000),
	"k":  big.NewRat(1_000, 1),
	"M":  big.NewRat(1_000_000, 1),
	"G":  big.NewRat(1_000_000_000, 1),
	"T":  new(big.Rat).SetInt64(1_000_000_000_000),
	"P":  new(big.Rat).SetInt64(1_000_000_000_000_000),
	"E":  new(big.Rat).SetInt64(1_000_000_000_000_000_000),
	"Ki": new(big.Rat).SetInt64(1 << 10),
	"Mi": new(big.Rat).SetInt64(1 << 20),
	"Gi": new(big.Rat).SetInt64(1 << 30),
	"Ti": new(big.Rat).SetInt64(1 << 40),
	"Pi": new(big.Rat).SetInt64(1 << 50),
	"Ei": new(big.Rat).SetInt64(1 << 60),
}

// ParseQuantity returns the exact value of q, or ErrQuantityFormat.
func ParseQuantity(q Quantity) (*big.Rat, error) {
	m := quantityRE.FindStringSubmatch(strings.TrimSpace(string(q)))
	if m == nil {
		return nil, ErrQuantityFormat
	}
	num, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return nil, ErrQuantityFormat
	}
	suffix := m[2]
	if mult, ok := quantitySuffix[suffix]; ok {
		return num.Mul(num, mult), nil
	}
	// Decimal exponent: e3, E-2.
	exp, ok := new(big.Int).SetString(strings.TrimLeft(suffix[1:], "+"), 10)
	if !ok || exp.BitLen() > 16 {
		return nil, ErrQuantityFormat
	}
	e := exp.Int64()
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(e)), nil)
	r := new(big.Rat).SetInt(pow)
	if e < 0 {
		r.Inv(r)
	}
	return num.Mul(num, r), nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// MilliValue is ParseQuantity's value in thousandths, rounded up (as
// Kubernetes' MilliValue), for CPU; ok is false for a malformed quantity or
// one that does not fit in an int64.
func (q Quantity) MilliValue() (v int64, ok bool) { return q.scaled(1000) }

// Value is ParseQuantity's value rounded up to an integer, for memory.
func (q Quantity) Value() (v int64, ok bool) { return q.scaled(1) }

func (q Quantity) scaled(mult int64) (int64, bool) {
	r, err := ParseQuantity(q)
	if err != nil {
		return 0, false
	}
	r.Mul(r, big.NewRat(mult, 1))
	n, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if rem.Sign() > 0 {
		n.Add(n, big.NewInt(1))
	}
	if !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}
