package api

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"unicode"

	"github.com/skiff-dev/skiff/api/field"
)

// The string validators below return a list of messages, empty when the
// value is valid, worded exactly as Kubernetes' apimachinery validation so
// that users see the errors they know. Callers wrap each message in a
// field.Invalid with the value's path.

// Maximum lengths.
const (
	DNS1123LabelMaxLength     = 63
	DNS1123SubdomainMaxLength = 253
	DNS1035LabelMaxLength     = 63
	QualifiedNameMaxLength    = 63
	LabelValueMaxLength       = 63
	// TotalAnnotationSizeLimitB caps the summed size of an object's
	// annotation keys and values (256 KiB).
	TotalAnnotationSizeLimitB = 256 * (1 << 10)
)

const (
	dns1123LabelFmt          = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123LabelErrMsg       = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
	dns1123SubdomainFmt      = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainErrorMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	dns1035LabelFmt          = "[a-z]([-a-z0-9]*[a-z0-9])?"
	dns1035LabelErrMsg       = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
	qnameCharFmt             = "[A-Za-z0-9]"
	qnameExtCharFmt          = "[-A-Za-z0-9_.]"
	qualifiedNameFmt         = "(" + qnameCharFmt + qnameExtCharFmt + "*)?" + qnameCharFmt
	qualifiedNameErrMsg      = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueFmt            = "(" + qualifiedNameFmt + ")?"
	labelValueErrMsg         = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	percentFmt               = "[0-9]+%"
	percentErrMsg            = "a valid percent string must be a numeric string followed by an ending '%'"
	httpHeaderNameFmt        = "[-A-Za-z0-9]+"
	httpHeaderNameErrMsg     = "a valid HTTP header must consist of alphanumeric characters or '-'"
	relaxedEnvVarNameErrMsg  = "a valid environment variable name must consist only of printable ASCII characters other than '='"
	fqdnErrMsg               = "should be a domain with at least two segments separated by dots"
)

var (
	dns1123LabelRE     = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	dns1123SubdomainRE = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	dns1035LabelRE     = regexp.MustCompile("^" + dns1035LabelFmt + "$")
	qualifiedNameRE    = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	labelValueRE       = regexp.MustCompile("^" + labelValueFmt + "$")
	percentRE          = regexp.MustCompile("^" + percentFmt + "$")
	httpHeaderNameRE   = regexp.MustCompile("^" + httpHeaderNameFmt + "$")
	portNameCharsetRE  = regexp.MustCompile("^[-a-z0-9]+$")
	portNameLetterRE   = regexp.MustCompile("[a-z]")
)

// MaxLenError is Kubernetes' "must be no more than N characters".
func MaxLenError(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

// EmptyError is Kubernetes' "must be non-empty".
func EmptyError() string { return "must be non-empty" }

// InclusiveRangeError is Kubernetes' "must be between lo and hi, inclusive".
func InclusiveRangeError(lo, hi int) string {
	return fmt.Sprintf("must be between %d and %d, inclusive", lo, hi)
}

// RegexError is Kubernetes' message for a value that fails a regex, with
// examples: "<msg> (e.g. 'a' or 'b', regex used for validation is '<re>')".
func RegexError(msg, re string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + re + "')"
	}
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + re + "')"
}

func prefixEach(msgs []string, prefix string) []string {
	for i := range msgs {
		msgs[i] = prefix + msgs[i]
	}
	return msgs
}

// ValidateDNS1123Label checks an RFC 1123 label (namespace names, container
// names, hostnames): at most 63 characters of [a-z0-9-], alphanumeric at
// both ends.
func ValidateDNS1123Label(s string) []string {
	var errs []string
	if len(s) > DNS1123LabelMaxLength {
		errs = append(errs, MaxLenError(DNS1123LabelMaxLength))
	}
	if !dns1123LabelRE.MatchString(s) {
		if dns1123SubdomainRE.MatchString(s) {
			// A valid subdomain that is not a valid label has dots.
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, RegexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

// ValidateDNS1123Subdomain checks an RFC 1123 subdomain (most object names):
// at most 253 characters, dot-separated labels.
func ValidateDNS1123Subdomain(s string) []string {
	var errs []string
	if len(s) > DNS1123SubdomainMaxLength {
		errs = append(errs, MaxLenError(DNS1123SubdomainMaxLength))
	}
	if !dns1123SubdomainRE.MatchString(s) {
		errs = append(errs, RegexError(dns1123SubdomainErrorMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// ValidateDNS1035Label checks an RFC 1035 label (Service names): like a
// DNS-1123 label but starting with a letter.
func ValidateDNS1035Label(s string) []string {
	var errs []string
	if len(s) > DNS1035LabelMaxLength {
		errs = append(errs, MaxLenError(DNS1035LabelMaxLength))
	}
	if !dns1035LabelRE.MatchString(s) {
		errs = append(errs, RegexError(dns1035LabelErrMsg, dns1035LabelFmt, "my-name", "abc-123"))
	}
	return errs
}

// ValidateQualifiedName checks a label key, annotation key or finalizer:
// an optional DNS-1123 subdomain prefix and '/', then a name of at most
// 63 characters ("app", "kubernetes.io/service-name").
func ValidateQualifiedName(s string) []string {
	var errs []string
	parts := strings.Split(s, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part "+EmptyError())
		} else if msgs := ValidateDNS1123Subdomain(prefix); len(msgs) != 0 {
			errs = append(errs, prefixEach(msgs, "prefix part ")...)
		}
	default:
		return append(errs, "a qualified name "+RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if name == "" {
		errs = append(errs, "name part "+EmptyError())
	} else if len(name) > QualifiedNameMaxLength {
		errs = append(errs, "name part "+MaxLenError(QualifiedNameMaxLength))
	}
	if !qualifiedNameRE.MatchString(name) {
		errs = append(errs, "name part "+RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// ValidateLabelValue checks a label value: empty, or at most 63 characters
// of [A-Za-z0-9-_.] starting and ending with an alphanumeric.
func ValidateLabelValue(s string) []string {
	var errs []string
	if len(s) > LabelValueMaxLength {
		errs = append(errs, MaxLenError(LabelValueMaxLength))
	}
	if !labelValueRE.MatchString(s) {
		errs = append(errs, RegexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// ValidatePortNum checks a port number: 1..65535.
func ValidatePortNum(port int) []string {
	if 1 <= port && port <= 65535 {
		return nil
	}
	return []string{InclusiveRangeError(1, 65535)}
}

// ValidateInRange checks lo <= v <= hi.
func ValidateInRange(v, lo, hi int) []string {
	if lo <= v && v <= hi {
		return nil
	}
	return []string{InclusiveRangeError(lo, hi)}
}

// ValidatePortName checks an IANA service name (a named container port or
// targetPort): at most 15 characters of [a-z0-9-], at least one letter, no
// "--", no hyphen at either end.
func ValidatePortName(s string) []string {
	var errs []string
	if len(s) > 15 {
		errs = append(errs, MaxLenError(15))
	}
	if !portNameCharsetRE.MatchString(s) {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !portNameLetterRE.MatchString(s) {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	if strings.Contains(s, "--") {
		errs = append(errs, "must not contain consecutive hyphens")
	}
	if len(s) > 0 && (s[0] == '-' || s[len(s)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen")
	}
	return errs
}

// ValidatePercent checks "<digits>%".
func ValidatePercent(s string) []string {
	if !percentRE.MatchString(s) {
		return []string{RegexError(percentErrMsg, percentFmt, "1%", "93%")}
	}
	return nil
}

// ValidateHTTPHeaderName checks an HTTP header name.
func ValidateHTTPHeaderName(s string) []string {
	if !httpHeaderNameRE.MatchString(s) {
		return []string{RegexError(httpHeaderNameErrMsg, httpHeaderNameFmt, "X-Header-Name")}
	}
	return nil
}

// ValidateEnvVarName checks an environment variable name: printable ASCII
// other than '=' (Kubernetes' relaxed rule, the default since 1.32).
func ValidateEnvVarName(s string) []string {
	var errs []string
	if s == "" {
		errs = append(errs, "environment variable name "+EmptyError())
	}
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || r == '=' {
			errs = append(errs, relaxedEnvVarNameErrMsg)
			break
		}
	}
	return errs
}

// ValidatePathSegmentName checks that s can be one segment of a URL path
// (names of objects whose kind allows anything else, such as Events).
func ValidatePathSegmentName(s string) []string {
	var errs []string
	if s == "." || s == ".." {
		errs = append(errs, fmt.Sprintf("may not be '%s'", s))
	}
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(s, bad) {
			errs = append(errs, fmt.Sprintf("may not contain '%s'", bad))
		}
	}
	return errs
}

// IsValidIP reports whether s is an IPv4 or IPv6 address in the form
// Kubernetes accepts (no zone, no IPv4-mapped IPv6, no leading zeros).
func IsValidIP(s string) bool {
	ip, err := netip.ParseAddr(s)
	return err == nil && ip.Zone() == "" && !ip.Is4In6()
}

// IsValidCIDR reports whether s is a CIDR such as 10.96.0.0/16 (the host
// bits may be set, as Kubernetes' legacy fields allow).
func IsValidCIDR(s string) bool {
	p, err := netip.ParsePrefix(s)
	return err == nil && !p.Addr().Is4In6()
}

// IsIPv6 reports whether s is a valid IPv6 address.
func IsIPv6(s string) bool {
	ip, err := netip.ParseAddr(s)
	return err == nil && ip.Is6() && !ip.Is4In6() && ip.Zone() == ""
}

// ValidateIP returns Kubernetes' error for an invalid IP at path.
func ValidateIP(path *field.Path, s string) field.ErrorList {
	if !IsValidIP(s) {
		return field.ErrorList{field.Invalid(path, s, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")}
	}
	return nil
}

// ValidateIPv4 returns Kubernetes' error for a value that is not an IPv4 address.
func ValidateIPv4(path *field.Path, s string) field.ErrorList {
	ip, err := netip.ParseAddr(s)
	if err != nil || !ip.Is4() {
		return field.ErrorList{field.Invalid(path, s, "must be a valid IPv4 address")}
	}
	return nil
}

// ValidateIPv6 returns Kubernetes' error for a value that is not an IPv6 address.
func ValidateIPv6(path *field.Path, s string) field.ErrorList {
	if !IsIPv6(s) {
		return field.ErrorList{field.Invalid(path, s, "must be a valid IPv6 address")}
	}
	return nil
}

// ValidateCIDR returns Kubernetes' error for an invalid CIDR at path.
func ValidateCIDR(path *field.Path, s string) field.ErrorList {
	if !IsValidCIDR(s) {
		return field.ErrorList{field.Invalid(path, s, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")}
	}
	return nil
}

// ValidateFQDN checks a fully qualified domain name (an FQDN endpoint).
func ValidateFQDN(path *field.Path, s string) field.ErrorList {
	var errs field.ErrorList
	if s == "" {
		return append(errs, field.Required(path, ""))
	}
	s = strings.TrimSuffix(s, ".")
	for _, msg := range ValidateDNS1123Subdomain(s) {
		errs = append(errs, field.Invalid(path, s, msg))
	}
	if len(errs) == 0 && len(strings.Split(s, ".")) < 2 {
		errs = append(errs, field.Invalid(path, s, fqdnErrMsg))
	}
	return errs
}

// Name validators, as Kubernetes' NameIs*: prefix is true when checking a
// generateName, whose trailing '-' is allowed (random characters follow).

func maskTrailingDash(s string) string {
	if len(s) > 1 && strings.HasSuffix(s, "-") {
		return s[:len(s)-1] + "a"
	}
	return s
}

// NameIsDNSSubdomain validates a name (or generateName prefix) as a
// DNS-1123 subdomain.
func NameIsDNSSubdomain(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return ValidateDNS1123Subdomain(name)
}

// NameIsDNSLabel validates a name (or generateName prefix) as a DNS-1123 label.
func NameIsDNSLabel(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return ValidateDNS1123Label(name)
}

// NameIsDNS1035Label validates a name (or generateName prefix) as a
// DNS-1035 label.
func NameIsDNS1035Label(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return ValidateDNS1035Label(name)
}

// NameIsPathSegment validates a name that only has to be a path segment.
func NameIsPathSegment(name string, prefix bool) []string {
	return ValidatePathSegmentName(name)
}

// ValidateNamespaceName validates a namespace name (a DNS-1123 label).
func ValidateNamespaceName(name string, prefix bool) []string { return NameIsDNSLabel(name, prefix) }

// ValidateIPAddressName validates an IPAddress object's name: an IP in
// canonical form (10.96.0.1, 2001:db8::1).
func ValidateIPAddressName(name string, prefix bool) []string {
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return []string{err.Error()}
	}
	if ip.String() != name {
		return []string{"must be a canonical format IP address"}
	}
	return nil
}
