// Package docs holds Skiff's documentation (the Markdown files beside this
// one) and, in docs_test.go, the checks that keep it usable from a clone:
// no file of the repository points at a document outside it, and every
// relative link in README.md and docs/*.md, with its #section, resolves.
package docs
