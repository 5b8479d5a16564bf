package kubectl

import (
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// allResources are what `get all` lists, in kubectl's order.
var allResources = []string{"pods", "services", "daemonsets", "deployments", "statefulsets"}

// errNoResourceType is kubectl's wording for an unknown resource.
func errNoResourceType(name string) error {
	return usageError("the server doesn't have a resource type %q", name)
}

// resolve finds a resource by plural, singular, short or kind name, with
// an optional group (deployments.apps, deploy.apps, deployments.v1.apps),
// case-insensitively.
func (s *session) resolve(name string) (*api.ResourceInfo, error) {
	lower := strings.ToLower(name)
	base, group, qualified := strings.Cut(lower, ".")
	if qualified {
		if v, g, ok := strings.Cut(group, "."); ok && len(v) > 1 && v[0] == 'v' && v[1] >= '0' && v[1] <= '9' {
			group = g
		}
		if group == "v1" || group == "core" {
			group = ""
		}
	}
	for _, r := range s.resources {
		if qualified && r.Group != group {
			continue
		}
		if r.Resource == base || r.Singular == base || strings.ToLower(r.Kind) == base {
			return r, nil
		}
		for _, sn := range r.ShortNames {
			if sn == base {
				return r, nil
			}
		}
	}
	return nil, errNoResourceType(name)
}

// kindGroup is how kubectl names a resource type in its messages:
// "service", "deployment.apps".
func kindGroup(info *api.ResourceInfo) string {
	k := strings.ToLower(info.Kind)
	if info.Group != "" {
		k += "." + info.Group
	}
	return k
}

// qualifiedResource is the plural resource with its group, as the server
// words its errors: "services", "deployments.apps".
func qualifiedResource(info *api.ResourceInfo) string {
	if info.Group != "" {
		return info.Resource + "." + info.Group
	}
	return info.Resource
}

// objectRef is "deployment.apps/web".
func objectRef(info *api.ResourceInfo, name string) string {
	return kindGroup(info) + "/" + name
}

// target is one resource type and the names asked for (none: all).
type target struct {
	info  *api.ResourceInfo
	names []string
}

const errResourceNameForm = "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'skiff get resource/<resource_name>' instead of 'skiff get resource resource/<resource_name>'"

// parseTargets reads kubectl's resource arguments: `TYPE[,TYPE...]
// [NAME...]` or `TYPE/NAME...`.
func (s *session) parseTargets(args []string) ([]target, error) {
	if len(args) == 0 {
		return nil, usageError("you must specify the type of resource")
	}
	if strings.Contains(args[0], "/") {
		var out []target
		for _, a := range args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok {
				return nil, usageError(errResourceNameForm)
			}
			if name == "" {
				return nil, usageError("arguments in resource/name form must have a single resource and name")
			}
			info, err := s.resolve(typ)
			if err != nil {
				return nil, err
			}
			if n := len(out); n > 0 && out[n-1].info == info {
				out[n-1].names = append(out[n-1].names, name)
				continue
			}
			out = append(out, target{info: info, names: []string{name}})
		}
		return out, nil
	}
	names := args[1:]
	for _, n := range names {
		if strings.Contains(n, "/") {
			return nil, usageError(errResourceNameForm)
		}
	}
	var out []target
	for _, typ := range strings.Split(args[0], ",") {
		if typ == "" {
			continue
		}
		if strings.EqualFold(typ, "all") {
			for _, r := range allResources {
				info, err := s.resolve(r)
				if err != nil {
					return nil, err
				}
				out = append(out, target{info: info, names: names})
			}
			continue
		}
		info, err := s.resolve(typ)
		if err != nil {
			return nil, err
		}
		out = append(out, target{info: info, names: names})
	}
	if len(out) == 0 {
		return nil, usageError("you must specify the type of resource")
	}
	return out, nil
}

// oneTarget reads `TYPE NAME` or `TYPE/NAME` naming exactly one object.
func (s *session) oneTarget(args []string, verb string) (*api.ResourceInfo, string, error) {
	ts, err := s.parseTargets(args)
	if err != nil {
		return nil, "", err
	}
	if len(ts) != 1 || len(ts[0].names) != 1 {
		return nil, "", usageError("%s takes exactly one TYPE NAME or TYPE/NAME", verb)
	}
	return ts[0].info, ts[0].names[0], nil
}
