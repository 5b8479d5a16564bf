// Package version holds build information reported by /version and
// `skiff version`.
package version

import "runtime"

// GitCommit is set at link time (-X) by the Makefile.
var GitCommit = "dev"

// Kubernetes-compatible version Skiff reports to clients such as kubectl.
const (
	Major      = "1"
	Minor      = "31"
	GitVersion = "v1.31.0-skiff"
)

// Info is the /version document.
type Info struct {
	Major        string `json:"major"`
	Minor        string `json:"minor"`
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// Get returns this build's version document.
func Get() Info {
	return Info{
		Major: Major, Minor: Minor, GitVersion: GitVersion, GitCommit: GitCommit,
		GitTreeState: "clean", BuildDate: "1970-01-01T00:00:00Z",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
}
