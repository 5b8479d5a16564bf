// Command kubectl is upstream kubectl built from its Go module
// (k8s.io/kubectl), exactly as k8s.io/kubernetes/cmd/kubectl builds it, so
// that the compatibility tests run a current kubectl without a download.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
