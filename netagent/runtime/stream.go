package runtime

import "io"

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Width, Height uint16
}

// Streams are the standard streams of a streaming exec (kubectl exec):
//
//   - Stdin nil gives the command an empty stdin (/dev/null); EOF on
//     Stdin closes the command's stdin.
//   - Stdout and Stderr nil discard.
//   - With TTY the command runs on a terminal (its stdin, stdout and
//     stderr, and its controlling terminal); what it writes goes to Stdout,
//     Stderr is not used. Resize, when set, is called once, before the
//     command starts, with the function that resizes that terminal; the
//     caller calls it for each size the client sends, in order, and a
//     size given before the terminal existed is applied then.
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	TTY            bool
	Resize         func(resize func(TerminalSize))
}
