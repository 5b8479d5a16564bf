package labels

import (
	"fmt"
	"strings"
)

// The formats and messages below are Kubernetes' (k8s.io/apimachinery
// util/validation), so errors read the same as kube-apiserver's.
const (
	qualifiedNameFmt       = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	qualifiedNameErrMsg    = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	qualifiedNameMaxLength = 63

	labelValueFmt       = "(" + qualifiedNameFmt + ")?"
	labelValueErrMsg    = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueMaxLength = 63

	dns1123LabelFmt          = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt      = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainErrorMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	dns1123SubdomainMaxLen   = 253
)

// IsQualifiedName checks a label key: an optional DNS-1123 subdomain prefix
// and "/", then a name of at most 63 characters matching
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. It returns Kubernetes' messages,
// one per problem; none means valid.
func IsQualifiedName(value string) []string {
	var errs []string
	parts := strings.Split(value, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		prefix := parts[0]
		name = parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part must be non-empty")
		} else {
			for _, m := range isDNS1123Subdomain(prefix) {
				errs = append(errs, "prefix part "+m)
			}
		}
	default:
		return append(errs, "a qualified name "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > qualifiedNameMaxLength {
		errs = append(errs, "name part "+maxLenError(qualifiedNameMaxLength))
	}
	if !isQualifiedNamePart(name) {
		errs = append(errs, "name part "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// IsValidLabelValue checks a label value: empty, or at most 63 characters
// matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. It returns Kubernetes'
// messages; none means valid.
func IsValidLabelValue(value string) []string {
	var errs []string
	if len(value) > labelValueMaxLength {
		errs = append(errs, maxLenError(labelValueMaxLength))
	}
	if value != "" && !isQualifiedNamePart(value) {
		errs = append(errs, regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

func isDNS1123Subdomain(value string) []string {
	var errs []string
	if len(value) > dns1123SubdomainMaxLen {
		errs = append(errs, maxLenError(dns1123SubdomainMaxLen))
	}
	if !matchesDNS1123Subdomain(value) {
		errs = append(errs, regexError(dns1123SubdomainErrorMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

func maxLenError(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

// regexError renders Kubernetes' "<msg> (e.g. 'a',  or 'b', regex used for
// validation is '<fmt>')" text, double space included.
func regexError(msg, format string, examples ...string) string {
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(" (e.g. ")
	for i, e := range examples {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("'" + e + "', ")
	}
	b.WriteString("regex used for validation is '" + format + "')")
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isQualifiedNamePart reports whether s matches
// ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$.
func isQualifiedNamePart(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// matchesDNS1123Subdomain reports whether s matches the DNS-1123 subdomain
// regex: dot-separated labels of [a-z0-9-], each starting and ending with
// [a-z0-9].
func matchesDNS1123Subdomain(s string) bool {
	if s == "" {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || !isLowerAlnum(label[0]) || !isLowerAlnum(label[len(label)-1]) {
			return false
		}
		for i := 1; i < len(label)-1; i++ {
			if c := label[i]; !isLowerAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}
