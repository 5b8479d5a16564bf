package apiserver

import (
	"encoding/json"
	"errors"
)

// A minimal scanner over stored JSON that reads metadata.name, namespace
// and labels without decoding the rest of the object, so that label
// selectors over large lists and watches stay cheap. Anything it does not
// understand is an error, and callers then fall back to encoding/json.

var errScan = errors.New("apiserver: malformed JSON")

func skipWS(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at d[i] == '"'
// and whether it contains escapes.
func skipString(d []byte, i int) (int, bool, error) {
	esc := false
	for j := i + 1; j < len(d); j++ {
		switch d[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc, nil
		}
	}
	return 0, false, errScan
}

// skipValue returns the index after the value starting at d[i].
func skipValue(d []byte, i int) (int, error) {
	if i >= len(d) {
		return 0, errScan
	}
	switch d[i] {
	case '"':
		end, _, err := skipString(d, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				end, _, err := skipString(d, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errScan
	default:
		j := i
		for j < len(d) {
			switch d[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errScan
				}
				return j, nil
			}
			j++
		}
		if j == i {
			return 0, errScan
		}
		return j, nil
	}
}

// eachMember calls fn for every member of the object d (which must be
// exactly one object), with the raw key (without quotes) and raw value.
func eachMember(d []byte, fn func(key []byte, keyEsc bool, val []byte) error) error {
	i := skipWS(d, 0)
	if i >= len(d) || d[i] != '{' {
		return errScan
	}
	i = skipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return nil
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return errScan
		}
		kend, kesc, err := skipString(d, i)
		if err != nil {
			return err
		}
		key := d[i+1 : kend-1]
		i = skipWS(d, kend)
		if i >= len(d) || d[i] != ':' {
			return errScan
		}
		i = skipWS(d, i+1)
		vend, err := skipValue(d, i)
		if err != nil {
			return err
		}
		if err := fn(key, kesc, d[i:vend]); err != nil {
			return err
		}
		i = skipWS(d, vend)
		if i >= len(d) {
			return errScan
		}
		if d[i] == '}' {
			return nil
		}
		if d[i] != ',' {
			return errScan
		}
		i = skipWS(d, i+1)
	}
}

func keyIs(key []byte, esc bool, want string) bool {
	if !esc {
		return string(key) == want
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &s) != nil {
		return false
	}
	return s == want
}

// stringValue decodes a raw JSON string (null gives "").
func stringValue(v []byte) (string, error) {
	if len(v) == 0 {
		return "", errScan
	}
	if v[0] != '"' {
		if string(v) == "null" {
			return "", nil
		}
		return "", errScan
	}
	end, esc, err := skipString(v, 0)
	if err != nil || end != len(v) {
		return "", errScan
	}
	if !esc {
		return string(v[1 : len(v)-1]), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", errScan
	}
	return s, nil
}

// scanMeta reads metadata.name, metadata.namespace and metadata.labels.
func scanMeta(raw []byte, m *metaOnly) error {
	return eachMember(raw, func(key []byte, esc bool, val []byte) error {
		if !keyIs(key, esc, "metadata") {
			return nil
		}
		if string(val) == "null" {
			return nil
		}
		return eachMember(val, func(key []byte, esc bool, val []byte) error {
			var err error
			switch {
			case keyIs(key, esc, "name"):
				m.Metadata.Name, err = stringValue(val)
			case keyIs(key, esc, "namespace"):
				m.Metadata.Namespace, err = stringValue(val)
			case keyIs(key, esc, "labels"):
				if string(val) == "null" {
					return nil
				}
				labels := make(map[string]string)
				err = eachMember(val, func(key []byte, esc bool, val []byte) error {
					k := string(key)
					if esc {
						var kerr error
						if k, kerr = stringValue(append(append([]byte{'"'}, key...), '"')); kerr != nil {
							return kerr
						}
					}
					v, verr := stringValue(val)
					labels[k] = v
					return verr
				})
				m.Metadata.Labels = labels
			}
			return err
		})
	})
}
