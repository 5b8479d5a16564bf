// Package kubectl is Skiff's command line for a running cluster: the verbs
// users type as kubectl commands, in the skiff binary (`skiff get svc`,
// `skiff apply -f`, ...). It talks to the server only through the API, with
// package client, like any other client; cli mounts Commands on
// the root command and cmd/skiff prints errors with PrintError.
//
// # Verbs
//
// get, describe, apply, create (-f, namespace, deployment, service),
// delete, expose, scale, rollout (status, undo, restart, history, pause,
// resume), run, logs, label, annotate, edit, api-resources, version. Each
// takes --kubeconfig, --data-dir and -n/--namespace, which (like any flag
// with a value) may also precede the verb, as in kubectl: `skiff -n
// kube-system get pods`. Resource arguments
// are kubectl's: TYPE[,TYPE] [NAME...] or TYPE/NAME..., with plural,
// singular, short (svc, po, deploy, sts, ns, no, ev, cm, sa) and kind names,
// optionally group-qualified (deployments.apps).
//
// # Connection
//
//   - The kubeconfig is --kubeconfig, else the first existing file of
//     $KUBECONFIG, else <--data-dir>/admin.kubeconfig (default
//     /var/lib/skiff). The namespace is -n, else the context's, else
//     "default".
//   - Env injects stdin, stdout, stderr, the environment and the clock; no
//     verb reads a global, so tests run the real root command in-process.
//
// # Output
//
//   - Tables: get asks for a meta.k8s.io/v1 Table (Accept:
//     application/json;as=Table;v=v1;g=meta.k8s.io, falling back to JSON)
//     and prints the server's columns (priority > 0 only with -o wide).
//     When the server answers a plain list, or a watch event that is not
//     a Table, the client-side printers (printers.go) give the same
//     columns and cells as the server's Tables, from api/printers
//     applied to the defaulted object; an unknown resource NAME and AGE. Columns are laid out as kubectl's tabwriter does: the
//     widest cell plus 3 spaces, at least 6, widths remembered across the
//     rows of `get -w`.
//   - Ages are kubectl's HumanDuration (5s, 3m2s, 4h, 2d3h).
//   - -o json (keys sorted, 4-space indent), yaml, name, jsonpath=
//     (package kubectl/jsonpath), custom-columns=. Several objects print
//     as a kubectl List.
//   - `get ep` lists the served core/v1 Endpoints objects (the endpoints
//     controller's, capped at 1,000 addresses as upstream), printed as
//     kubectl prints them (NAME ENDPOINTS AGE, the first three ready
//     ip:port then "+ N more..."); `get endpointslices` the slices.
//   - No colour, on a terminal or not.
//
// # Errors and exit status
//
//   - API errors print as kubectl's: `Error from server (NotFound):
//     services "x" not found`, `The Service "x" is invalid: ...`; client
//     errors as `error: ...`; a refused connection as `The connection to
//     the server HOST was refused - did you specify the right host or
//     port?`. The exit status is 1, or the container's exit status for
//     `run -i`.
//   - Verbs that take several objects (get, delete, apply, label, scale)
//     go on after a failed one, print each error to stderr as it happens
//     and exit 1 at the end (ExitError with no message).
//
// # Writes
//
//   - apply records the configuration in the
//     kubectl.kubernetes.io/last-applied-configuration annotation and
//     updates with a three-way strategic merge patch (package
//     kubectl/threeway) computed client-side: "created", "configured" or
//     "unchanged". edit sends the two-way patch of the user's changes.
//   - scale goes through the /scale subresource; rollout history and undo
//     read the Deployment's ReplicaSets (controller reference and
//     selector) and their deployment.kubernetes.io/revision annotations,
//     and undo, as kubectl, replaces the Deployment's template with the
//     chosen ReplicaSet's (without pod-template-hash) in a JSON patch;
//     rollout restart sets the template annotation
//     kubectl.kubernetes.io/restartedAt.
//   - delete waits (--wait, default true) until each object is gone or
//     replaced by one with another uid, and prints kubectl 1.37's
//     `service "x" deleted from NS namespace` ("force deleted" with a zero
//     grace period; no namespace for cluster-scoped objects).
//   - run -i/-t/--attach cannot attach (Skiff has no attach): it waits for
//     the pod to start, streams its log, waits for it to end and, with
//     --rm, deletes it. Without a log source (no node agent) it says so.
package kubectl
