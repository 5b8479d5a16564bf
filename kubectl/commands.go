package kubectl

import (
	"github.com/spf13/cobra"
)

// Commands returns the kubectl-style verbs (get, describe, apply, create,
// delete, expose, scale, rollout, run, logs, trace, label, annotate, edit,
// api-resources, version), each with the connection flags --kubeconfig,
// --data-dir and -n/--namespace. Errors come back from Execute; print them
// with PrintError, which also gives the exit status.
func Commands(env Env) []*cobra.Command {
	env = env.withDefaults()
	verbs := []func(*globals) *cobra.Command{
		newGetCommand,
		newDescribeCommand,
		newApplyCommand,
		newCreateCommand,
		newDeleteCommand,
		newExposeCommand,
		newScaleCommand,
		newRolloutCommand,
		newRunCommand,
		newLogsCommand,
		newExecCommand,
		newAttachCommand,
		newCpCommand,
		newTraceCommand,
		newPortForwardCommand,
		newLabelCommand,
		newAnnotateCommand,
		newEditCommand,
		newAPIResourcesCommand,
		newVersionCommand,
	}
	cmds := make([]*cobra.Command, 0, len(verbs))
	for _, v := range verbs {
		g := &globals{env: env}
		cmd := v(g)
		g.addFlags(cmd)
		cmd.SetIn(env.In)
		cmd.SetOut(env.Out)
		cmd.SetErr(env.ErrOut)
		cmds = append(cmds, cmd)
	}
	return cmds
}
