// Package labels parses and matches Kubernetes label selectors:
// equality (=, ==, !=), set-based (in, notin), exists (key) and !key.
package labels

import "errors"

// Selector matches label sets.
type Selector interface {
	// Matches reports whether the labels satisfy every requirement.
	Matches(labels map[string]string) bool
	// Empty reports whether the selector selects everything.
	Empty() bool
	// String renders the selector in canonical form.
	String() string
}

// Parse parses a selector string such as "app=web,tier in (a,b),!canary".
// The empty string selects everything.
func Parse(s string) (Selector, error) { return nil, errors.New("labels: not implemented") }

// Everything selects all label sets.
func Everything() Selector { return nil }

// SelectorFromSet returns the equality selector for a map (k1=v1,k2=v2).
func SelectorFromSet(set map[string]string) Selector { return nil }
