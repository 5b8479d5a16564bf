// Package remotecommand speaks the Kubernetes remote command protocol of
// exec and attach over WebSocket, the server side (the node API) and the
// client side (skiff exec, attach, cp), and over SPDY/3.1, the server
// side only (spdy.go), as read in the Kubernetes sources
// (k8s.io/apimachinery/pkg/util/remotecommand/constants.go,
// k8s.io/streaming/pkg/httpstream/wsstream/conn.go, the kubelet's
// pkg/kubelet/cri/streaming/remotecommand and client-go's
// tools/remotecommand/websocket.go and v4.go).
//
// # Wire format
//
// The client sends a WebSocket upgrade (GET) offering subprotocols in
// Sec-WebSocket-Protocol; this package accepts v5.channel.k8s.io (kubectl
// 1.31+) and v4.channel.k8s.io, preferring v5, and answers 400 before the
// upgrade when neither is offered. Every WebSocket message is binary: its
// first byte is the channel, the rest the data:
//
//	0   stdin   client → server
//	1   stdout  server → client
//	2   stderr  server → client
//	3   error   server → client: one Status (JSON), then the server closes
//	4   resize  client → server: {"Width":80,"Height":24}
//	255 close   client → server, v5 only: [255, channel] half-closes that
//	            channel (255 0 is EOF on stdin: how kubectl cp ends a copy
//	            into the pod)
//
// Right after the upgrade the server writes an empty message on the lowest
// channel it writes (stdout, else stderr, else error), as the kubelet does,
// so that a client knows the stream is up. At the end the error channel
// carries the v4 Status: {"metadata":{},"status":"Success"} for exit code
// 0; for another exit code status Failure, reason NonZeroExitCode, and the
// code as the message of a cause of reason ExitCode in details.causes
// (client-go turns that into exec.CodeExitError and kubectl exits with the
// code); any other failure is status Failure, reason InternalError, code
// 500, with the message. Then the server closes the connection (a
// WebSocket close frame, then TCP).
//
// The query (kubelet's names): command (repeated, exec only, required),
// container, stdin, stdout, stderr, tty (booleans "true"/"1"). As
// upstream, at least one of stdin, stdout and stderr must be set, and tty
// drops stderr (a terminal has one output).
//
// # SPDY
//
// kubectl 1.29 and older (the Debian kubectl 1.20) send a POST with
// Upgrade: SPDY/3.1 and X-Stream-Protocol-Version offering
// v4.channel.k8s.io; the server answers 101 with that version, and the
// client opens one SPDY stream per channel (moby/spdystream), named by its
// streamType header: error, stdin, stdout, stderr, resize (a sequence of
// JSON sizes). The same Status ends the error stream; stdin ends with the
// stream's half-close. The client has 30s to open its streams (the
// kubelet's DefaultStreamCreationTimeout).
//
// # Not spoken
//
// The older WebSocket subprotocols (channel.k8s.io, v2, v3,
// base64.channel.k8s.io) and SPDY with another version than v4: 400.
//
// # Lifetimes
//
// Upgrade starts one goroutine, the reader of the client's messages (over
// SPDY: spdystream's frame workers, and a reader of resizes);
// Close writes the status, closes the connection and waits for
// that goroutine, so a closed Session leaves nothing running. The reader
// ending early (the client went away) closes Done; the caller then cancels
// the command.
package remotecommand
