package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// IntOrStringType tells which of IntOrString's values is in use.
type IntOrStringType int

const (
	// Int means IntOrString holds IntVal.
	Int IntOrStringType = iota
	// String means IntOrString holds StrVal.
	String
)

// IntOrString is a JSON number or a JSON string, as Kubernetes' intstr:
// a Service targetPort (80 or "http"), a Deployment's maxSurge (1 or "25%").
// The zero value is the number 0.
type IntOrString struct {
	Type   IntOrStringType
	IntVal int32
	StrVal string
}

// FromInt32 returns an IntOrString holding the number v.
func FromInt32(v int32) IntOrString { return IntOrString{Type: Int, IntVal: v} }

// FromString returns an IntOrString holding the string s.
func FromString(s string) IntOrString { return IntOrString{Type: String, StrVal: s} }

// ParseIntOrString returns a number if s is a decimal int32, else the string s.
func ParseIntOrString(s string) IntOrString {
	if v, err := strconv.ParseInt(s, 10, 32); err == nil {
		return FromInt32(int32(v))
	}
	return FromString(s)
}

// IsZero reports whether v is the number 0 or the empty string, so that
// `omitzero` leaves an unset IntOrString out of the JSON.
func (v IntOrString) IsZero() bool {
	if v.Type == String {
		return v.StrVal == ""
	}
	return v.IntVal == 0
}

// String renders the number in decimal or the string as is.
func (v IntOrString) String() string {
	if v.Type == String {
		return v.StrVal
	}
	return strconv.Itoa(int(v.IntVal))
}

// IntValue is the number, or the string parsed as a decimal (0 when it is
// not one), as Kubernetes' IntValue.
func (v IntOrString) IntValue() int {
	if v.Type == String {
		i, _ := strconv.Atoi(v.StrVal)
		return i
	}
	return int(v.IntVal)
}

// MarshalJSON implements json.Marshaler.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.Type == String {
		return json.Marshal(v.StrVal)
	}
	return json.Marshal(v.IntVal)
}

// UnmarshalJSON implements json.Unmarshaler: a JSON string becomes a
// String, a JSON number an Int (it must fit in an int32).
func (v *IntOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = FromString(s)
		return nil
	}
	if string(b) == "null" {
		*v = IntOrString{}
		return nil
	}
	var i int32
	if err := json.Unmarshal(b, &i); err != nil {
		return fmt.Errorf("must be an int32 or a string: %w", err)
	}
	*v = FromInt32(i)
	return nil
}

// ScaledValue resolves v against total: a number is returned as is, a
// percent such as "25%" becomes that share of total, rounded up when
// roundUp is set and down otherwise (Deployments round maxSurge up and
// maxUnavailable down). A string that is not a percent is an error.
func (v IntOrString) ScaledValue(total int, roundUp bool) (int, error) {
	if v.Type != String {
		return int(v.IntVal), nil
	}
	s, ok := strings.CutSuffix(v.StrVal, "%")
	if !ok {
		return 0, fmt.Errorf("invalid value for IntOrString: invalid type: string is not a percentage: %q", v.StrVal)
	}
	p, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("invalid value for IntOrString: invalid value %q: %w", v.StrVal, err)
	}
	n := p * total
	if n >= 0 {
		if roundUp {
			return (n + 99) / 100, nil
		}
		return n / 100, nil
	}
	// Negative percents or totals: floor and ceil towards their true sides.
	if roundUp {
		return -((-n) / 100), nil
	}
	return -((-n + 99) / 100), nil
}

// GetScaledValueFromIntOrPercent is Kubernetes' helper of the same name: it
// resolves a possibly nil IntOrString against total (see ScaledValue).
func GetScaledValueFromIntOrPercent(v *IntOrString, total int, roundUp bool) (int, error) {
	if v == nil {
		return 0, errors.New("nil value for IntOrString")
	}
	return v.ScaledValue(total, roundUp)
}
