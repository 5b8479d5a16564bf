package kubectl

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"syscall"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// ExitError ends a verb with an exit status. Msg is what PrintError
// prints; an empty Msg means the verb already printed its errors (delete
// and get go on after a failed name, as kubectl does).
type ExitError struct {
	Code int
	Msg  string
}

// Error implements error.
func (e *ExitError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Msg
}

// errPrinted is the error of a verb that printed its errors already.
var errPrinted = &ExitError{Code: 1}

// PrintError writes err as kubectl does (`Error from server (NotFound):
// services "x" not found`, `error: ...`) and returns the exit status the
// process should end with.
func PrintError(w io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Msg != "" {
			fmt.Fprintln(w, ee.Msg)
		}
		if ee.Code == 0 {
			return 1
		}
		return ee.Code
	}
	fmt.Fprintln(w, errorText(err))
	return 1
}

// errorText renders one error as kubectl's CheckErr does.
func errorText(err error) string {
	var ae *client.APIError
	if errors.As(err, &ae) {
		st := ae.Status
		switch {
		case st.Reason == api.StatusReasonInvalid && st.Details != nil && st.Details.Name != "":
			return invalidText(st)
		case st.Reason == api.StatusReasonUnauthorized:
			return fmt.Sprintf("error: You must be logged in to the server (%s)", st.Message)
		case st.Reason != "":
			return fmt.Sprintf("Error from server (%s): %s", st.Reason, st.Message)
		default:
			return "Error from server: " + st.Message
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		host := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			host = u.Host
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?", host)
		}
		return "Unable to connect to the server: " + ue.Err.Error()
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "client: ")
	if strings.HasPrefix(msg, "error: ") {
		return msg
	}
	return "error: " + msg
}

// invalidText is kubectl's rendering of a 422: `The Service "x" is
// invalid: <cause>` or one cause per line.
func invalidText(st api.Status) string {
	kind := st.Details.Kind
	if kind == "" {
		kind = "object"
	}
	head := fmt.Sprintf("The %s %q is invalid", kind, st.Details.Name)
	var causes []string
	for _, c := range st.Details.Causes {
		msg := c.Message
		// Kubernetes sends the field apart from the message; Skiff's
		// message already starts with it.
		if c.Field != "" && !strings.HasPrefix(msg, c.Field+":") {
			msg = c.Field + ": " + msg
		}
		causes = append(causes, msg)
	}
	switch len(causes) {
	case 0:
		if i := strings.Index(st.Message, " is invalid: "); i >= 0 {
			return head + ": " + st.Message[i+len(" is invalid: "):]
		}
		return head
	case 1:
		return head + ": " + causes[0]
	}
	return head + ": \n* " + strings.Join(causes, "\n* ")
}

// usageError is a client-side error about the command line.
func usageError(format string, args ...any) error {
	return &ExitError{Code: 1, Msg: "error: " + fmt.Sprintf(format, args...)}
}
