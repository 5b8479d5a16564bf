package protobuf

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"time"
)

// MediaType is the Kubernetes protobuf media type.
const MediaType = "application/vnd.kubernetes.protobuf"

// magic prefixes every Kubernetes protobuf body.
var magic = []byte("k8s\x00")

// maxDepth bounds message nesting (the deepest Skiff kind, a Pod's
// projected volume sources, is under 15).
const maxDepth = 40

// kind is the shape of a field's value.
type kind uint8

const (
	kindString kind = iota + 1
	kindBytes
	kindBool
	kindInt32
	kindInt64
	kindDouble
	kindMessage
	kindMap         // map<string, mapVal>: repeated {1: key, 2: value}
	kindTime        // meta/v1 Time: {1: seconds, 2: nanos} → RFC 3339
	kindMicroTime   // meta/v1 MicroTime: as Time, with microseconds
	kindDuration    // meta/v1 Duration: {1: nanoseconds} → "1m30s"
	kindIntOrString // util/intstr IntOrString: {1: type, 2: intVal, 3: strVal}
	kindQuantity    // api/resource Quantity: {1: string}
	kindRawJSON     // FieldsV1, RawExtension: {1: raw JSON}
	kindStringList  // a named []string map value (ExtraValue): {1: repeated string} → ["a","b"]
)

// field is one field of a message table.
type field struct {
	num      int32
	json     string
	kind     kind
	mapVal   kind // the value kind of a kindMap
	msg      int  // messages index of a kindMessage (or of a map's values)
	repeated bool
	pointer  bool // a Go pointer: a zero value is kept
	inline   bool // a message whose members JSON puts in the parent's object
}

// message is one message table, fields sorted by number.
type message struct {
	name   string
	fields []field
}

// root maps an envelope's apiVersion ("" for any) and kind to a message.
type root struct {
	apiVersion, kind string
	msg              int
}

// ToJSON converts a Kubernetes protobuf body to JSON carrying the
// envelope's apiVersion and kind. strict makes a field number the tables do
// not know an error (ErrUnknownField); otherwise it is skipped. A raw
// payload whose contentType is application/json is returned as it is.
func ToJSON(data []byte, strict bool) ([]byte, error) {
	if !bytes.HasPrefix(data, magic) {
		return nil, ErrMagic
	}
	var (
		apiVersion, kindName, encoding, contentType string
		raw                                         []byte
	)
	err := eachField(data[len(magic):], func(num int32, wt int, v uint64, b []byte) error {
		switch {
		case num == 1 && wt == wireBytes:
			return eachField(b, func(num int32, wt int, _ uint64, b []byte) error {
				switch {
				case num == 1 && wt == wireBytes:
					apiVersion = string(b)
				case num == 2 && wt == wireBytes:
					kindName = string(b)
				case strict:
					return fmt.Errorf("%w %d in runtime.TypeMeta", ErrUnknownField, num)
				}
				return nil
			})
		case num == 2 && wt == wireBytes:
			raw = b
		case num == 3 && wt == wireBytes:
			encoding = string(b)
		case num == 4 && wt == wireBytes:
			contentType = string(b)
		case strict:
			return fmt.Errorf("%w %d in runtime.Unknown", ErrUnknownField, num)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if encoding != "" {
		return nil, fmt.Errorf("%w: content encoding %q", ErrMalformed, encoding)
	}
	switch contentType {
	case "", MediaType:
	case "application/json":
		if !json.Valid(raw) {
			return nil, fmt.Errorf("%w: raw application/json is not JSON", ErrMalformed)
		}
		return raw, nil
	default:
		return nil, fmt.Errorf("%w: raw content type %q", ErrMalformed, contentType)
	}
	r := findRoot(apiVersion, kindName)
	if r == nil {
		return nil, fmt.Errorf("%w: %q %q", ErrUnsupportedKind, apiVersion, kindName)
	}
	d := decoder{strict: strict}
	var out bytes.Buffer
	out.WriteByte('{')
	n := 0
	for _, kv := range [][2]string{{"apiVersion", apiVersion}, {"kind", kindName}} {
		if kv[1] == "" {
			continue
		}
		if n > 0 {
			out.WriteByte(',')
		}
		out.WriteString(strconv.Quote(kv[0]))
		out.WriteByte(':')
		writeString(&out, kv[1])
		n++
	}
	body, err := d.message(r.msg, raw, 0)
	if err != nil {
		return nil, err
	}
	if len(body) > 2 { // {...} with members
		if n > 0 {
			out.WriteByte(',')
		}
		out.Write(body[1 : len(body)-1])
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func findRoot(apiVersion, kindName string) *root {
	for i := range roots {
		r := &roots[i]
		if r.kind == kindName && (r.apiVersion == "" || r.apiVersion == apiVersion) {
			return r
		}
	}
	return nil
}

// Wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// eachField calls f for every field of a message: a varint or fixed value
// in v, a length-delimited one in b.
func eachField(data []byte, f func(num int32, wt int, v uint64, b []byte) error) error {
	for len(data) > 0 {
		key, n := binary.Uvarint(data)
		if n <= 0 {
			return fmt.Errorf("%w: bad field key", ErrMalformed)
		}
		data = data[n:]
		num, wt := key>>3, int(key&7)
		if num == 0 || num > math.MaxInt32 {
			return fmt.Errorf("%w: field number %d", ErrMalformed, num)
		}
		var (
			v uint64
			b []byte
		)
		switch wt {
		case wireVarint:
			v, n = binary.Uvarint(data)
			if n <= 0 {
				return fmt.Errorf("%w: bad varint", ErrMalformed)
			}
			data = data[n:]
		case wireFixed64:
			if len(data) < 8 {
				return fmt.Errorf("%w: short fixed64", ErrMalformed)
			}
			v, data = binary.LittleEndian.Uint64(data), data[8:]
		case wireFixed32:
			if len(data) < 4 {
				return fmt.Errorf("%w: short fixed32", ErrMalformed)
			}
			v, data = uint64(binary.LittleEndian.Uint32(data)), data[4:]
		case wireBytes:
			l, n := binary.Uvarint(data)
			if n <= 0 || l > uint64(len(data)-n) {
				return fmt.Errorf("%w: bad length", ErrMalformed)
			}
			b, data = data[n:n+int(l)], data[n+int(l):]
		default:
			return fmt.Errorf("%w: wire type %d", ErrMalformed, wt)
		}
		if err := f(int32(num), wt, v, b); err != nil {
			return err
		}
	}
	return nil
}

// decoder converts one body.
type decoder struct {
	strict bool
}

// slot collects one field's values while its message is read.
type slot struct {
	val  []byte   // a singular field's JSON (nil: absent or zero)
	list [][]byte // a repeated field's elements
	keys []string // a map's keys in first-seen order
	vals map[string][]byte
}

// message converts message msg to a JSON object.
func (d *decoder) message(msg int, data []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrMalformed, maxDepth)
	}
	m := &messages[msg]
	slots := make([]slot, len(m.fields))
	err := eachField(data, func(num int32, wt int, v uint64, b []byte) error {
		i := sort.Search(len(m.fields), func(i int) bool { return m.fields[i].num >= num })
		if i == len(m.fields) || m.fields[i].num != num {
			if d.strict {
				return fmt.Errorf("%w %d in %s", ErrUnknownField, num, m.name)
			}
			return nil
		}
		f := &m.fields[i]
		s := &slots[i]
		switch {
		case f.kind == kindMap:
			return d.mapEntry(f, s, wt, b, depth)
		case f.repeated && wt == wireBytes && packable(f.kind):
			for len(b) > 0 {
				var v uint64
				var n int
				switch f.kind {
				case kindDouble:
					if len(b) < 8 {
						return fmt.Errorf("%w: short packed double in %s.%s", ErrMalformed, m.name, f.json)
					}
					v, n = binary.LittleEndian.Uint64(b), 8
				default:
					v, n = binary.Uvarint(b)
					if n <= 0 {
						return fmt.Errorf("%w: bad packed varint in %s.%s", ErrMalformed, m.name, f.json)
					}
				}
				b = b[n:]
				j, _, err := d.value(f.kind, f.msg, wireOf(f.kind), v, nil, depth)
				if err != nil {
					return fmt.Errorf("%s.%s: %w", m.name, f.json, err)
				}
				s.list = append(s.list, j)
			}
			return nil
		}
		j, zero, err := d.value(f.kind, f.msg, wt, v, b, depth)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", m.name, f.json, err)
		}
		switch {
		case f.repeated:
			s.list = append(s.list, j)
		case zero && !f.pointer:
			s.val = nil
		default:
			s.val = j
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	n := 0
	member := func(name string) {
		if n > 0 {
			out.WriteByte(',')
		}
		n++
		writeString(&out, name)
		out.WriteByte(':')
	}
	for i := range m.fields {
		f, s := &m.fields[i], &slots[i]
		switch {
		case f.inline:
			if len(s.val) > 2 {
				if n > 0 {
					out.WriteByte(',')
				}
				n++
				out.Write(s.val[1 : len(s.val)-1])
			}
		case f.kind == kindMap:
			if len(s.keys) == 0 {
				continue
			}
			member(f.json)
			out.WriteByte('{')
			for k, key := range s.keys {
				if k > 0 {
					out.WriteByte(',')
				}
				writeString(&out, key)
				out.WriteByte(':')
				out.Write(s.vals[key])
			}
			out.WriteByte('}')
		case f.repeated:
			if len(s.list) == 0 {
				continue
			}
			member(f.json)
			out.WriteByte('[')
			for k, e := range s.list {
				if k > 0 {
					out.WriteByte(',')
				}
				out.Write(e)
			}
			out.WriteByte(']')
		case s.val != nil:
			member(f.json)
			out.Write(s.val)
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// mapEntry reads one {1: key, 2: value} entry of a map field.
func (d *decoder) mapEntry(f *field, s *slot, wt int, b []byte, depth int) error {
	if wt != wireBytes {
		return fmt.Errorf("%w: map %s has wire type %d", ErrMalformed, f.json, wt)
	}
	var key string
	var val []byte
	err := eachField(b, func(num int32, wt int, v uint64, b []byte) error {
		switch num {
		case 1:
			if wt != wireBytes {
				return fmt.Errorf("%w: map %s key has wire type %d", ErrMalformed, f.json, wt)
			}
			key = string(b)
		case 2:
			j, _, err := d.value(f.mapVal, f.msg, wt, v, b, depth)
			if err != nil {
				return fmt.Errorf("%s[%q]: %w", f.json, key, err)
			}
			val = j
		default:
			if d.strict {
				return fmt.Errorf("%w %d in map entry %s", ErrUnknownField, num, f.json)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if val == nil { // an absent value is the value kind's zero
		j, _, err := d.value(f.mapVal, f.msg, wireOf(f.mapVal), 0, nil, depth)
		if err != nil {
			return err
		}
		val = j
	}
	if s.vals == nil {
		s.vals = map[string][]byte{}
	}
	if _, ok := s.vals[key]; !ok {
		s.keys = append(s.keys, key)
	}
	s.vals[key] = val
	return nil
}

func packable(k kind) bool {
	switch k {
	case kindBool, kindInt32, kindInt64, kindDouble:
		return true
	}
	return false
}

// wireOf is the wire type a kind's values travel in.
func wireOf(k kind) int {
	switch k {
	case kindBool, kindInt32, kindInt64:
		return wireVarint
	case kindDouble:
		return wireFixed64
	}
	return wireBytes
}

// value converts one field value to JSON and says whether it is its kind's
// zero (left out of non-pointer fields).
func (d *decoder) value(k kind, msg int, wt int, v uint64, b []byte, depth int) ([]byte, bool, error) {
	if want := wireOf(k); wt != want {
		return nil, false, fmt.Errorf("%w: wire type %d, want %d", ErrMalformed, wt, want)
	}
	switch k {
	case kindString:
		var buf bytes.Buffer
		writeString(&buf, string(b))
		return buf.Bytes(), len(b) == 0, nil
	case kindBytes:
		return []byte(`"` + base64.StdEncoding.EncodeToString(b) + `"`), len(b) == 0, nil
	case kindBool:
		if v != 0 {
			return []byte("true"), false, nil
		}
		return []byte("false"), true, nil
	case kindInt32:
		return strconv.AppendInt(nil, int64(int32(v)), 10), int32(v) == 0, nil
	case kindInt64:
		return strconv.AppendInt(nil, int64(v), 10), v == 0, nil
	case kindDouble:
		f := math.Float64frombits(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false, fmt.Errorf("%w: double %v", ErrMalformed, f)
		}
		return strconv.AppendFloat(nil, f, 'g', -1, 64), f == 0, nil
	case kindMessage:
		j, err := d.message(msg, b, depth+1)
		return j, len(j) == 2, err
	case kindTime, kindMicroTime:
		return d.timestamp(k, b)
	case kindDuration:
		var n int64
		err := d.eachSmall(b, "Duration", func(num int32, wt int, v uint64, _ []byte) bool {
			if num != 1 || wt != wireVarint {
				return false
			}
			n = int64(v)
			return true
		})
		if err != nil {
			return nil, false, err
		}
		return strconv.AppendQuote(nil, time.Duration(n).String()), n == 0, nil
	case kindIntOrString:
		var (
			typ    int64
			intVal int32
			strVal string
		)
		err := d.eachSmall(b, "IntOrString", func(num int32, wt int, v uint64, b []byte) bool {
			switch {
			case num == 1 && wt == wireVarint:
				typ = int64(v)
			case num == 2 && wt == wireVarint:
				intVal = int32(v)
			case num == 3 && wt == wireBytes:
				strVal = string(b)
			default:
				return false
			}
			return true
		})
		if err != nil {
			return nil, false, err
		}
		switch typ {
		case 0:
			return strconv.AppendInt(nil, int64(intVal), 10), intVal == 0, nil
		case 1:
			var buf bytes.Buffer
			writeString(&buf, strVal)
			return buf.Bytes(), false, nil
		}
		return nil, false, fmt.Errorf("%w: IntOrString type %d", ErrMalformed, typ)
	case kindQuantity:
		var s string
		err := d.eachSmall(b, "Quantity", func(num int32, wt int, _ uint64, b []byte) bool {
			if num != 1 || wt != wireBytes {
				return false
			}
			s = string(b)
			return true
		})
		if err != nil {
			return nil, false, err
		}
		if s == "" { // a zero Quantity; Kubernetes marshals "0"
			return []byte(`"0"`), true, nil
		}
		var buf bytes.Buffer
		writeString(&buf, s)
		return buf.Bytes(), false, nil
	case kindStringList:
		var buf bytes.Buffer
		buf.WriteByte('[')
		n := 0
		err := d.eachSmall(b, "string list", func(num int32, wt int, _ uint64, b []byte) bool {
			if num != 1 || wt != wireBytes {
				return false
			}
			if n > 0 {
				buf.WriteByte(',')
			}
			writeString(&buf, string(b))
			n++
			return true
		})
		if err != nil {
			return nil, false, err
		}
		buf.WriteByte(']')
		return buf.Bytes(), n == 0, nil
	case kindRawJSON:
		var raw []byte
		err := d.eachSmall(b, "raw", func(num int32, wt int, _ uint64, b []byte) bool {
			if num != 1 || wt != wireBytes {
				return false
			}
			raw = b
			return true
		})
		if err != nil {
			return nil, false, err
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			return []byte("null"), true, nil
		}
		if !json.Valid(raw) {
			return nil, false, fmt.Errorf("%w: raw field is not JSON", ErrMalformed)
		}
		return raw, false, nil
	}
	return nil, false, fmt.Errorf("%w: kind %d", ErrMalformed, k)
}

// timestamp converts a meta/v1 Time or MicroTime; an empty message is the
// zero time, null in JSON.
func (d *decoder) timestamp(k kind, b []byte) ([]byte, bool, error) {
	if len(b) == 0 {
		return []byte("null"), true, nil
	}
	var sec, nanos int64
	err := d.eachSmall(b, "Timestamp", func(num int32, wt int, v uint64, _ []byte) bool {
		switch {
		case num == 1 && wt == wireVarint:
			sec = int64(v)
		case num == 2 && wt == wireVarint:
			nanos = int64(int32(v))
		default:
			return false
		}
		return true
	})
	if err != nil {
		return nil, false, err
	}
	// RFC 3339 years are 0000-9999.
	if sec < -62135596800 || sec > 253402300799 || nanos < 0 || nanos > 999999999 {
		return nil, false, fmt.Errorf("%w: timestamp %d.%09d out of range", ErrMalformed, sec, nanos)
	}
	if k == kindTime {
		return strconv.AppendQuote(nil, time.Unix(sec, 0).UTC().Format(time.RFC3339)), false, nil
	}
	return strconv.AppendQuote(nil, time.Unix(sec, nanos).UTC().Format("2006-01-02T15:04:05.000000Z07:00")), false, nil
}

// eachSmall reads the fields of a fixed apimachinery message; f reports
// whether it knows a field. Unknown fields are errors when strict.
func (d *decoder) eachSmall(b []byte, name string, f func(num int32, wt int, v uint64, b []byte) bool) error {
	return eachField(b, func(num int32, wt int, v uint64, b []byte) error {
		if !f(num, wt, v, b) && d.strict {
			return fmt.Errorf("%w %d (wire type %d) in %s", ErrUnknownField, num, wt, name)
		}
		return nil
	})
}

// writeString writes s as a JSON string (invalid UTF-8 becomes U+FFFD, as
// encoding/json does).
func writeString(buf *bytes.Buffer, s string) {
	if isPlain(s) {
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	j, _ := json.Marshal(s) // a string always marshals
	buf.Write(j)
}

// isPlain reports whether s needs no JSON escaping.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
