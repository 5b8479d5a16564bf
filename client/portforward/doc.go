// Package portforward speaks the pods/portforward wire protocols, both
// ends: Serve is the node side (the kubelet's
// pkg/kubelet/cri/streaming/portforward), Dial and Conn.Forward the client
// side (client-go's tools/portforward) that `skiff port-forward` uses.
//
// # The wire format, as read in the Kubernetes sources
//
// SPDY (httpstream.go, apimachinery util/httpstream/spdy): the client sends
// `POST .../portforward` (GET works too) with `Connection: Upgrade`,
// `Upgrade: SPDY/3.1` and `X-Stream-Protocol-Version: portforward.k8s.io`.
// The server answers 101 with `Upgrade: SPDY/3.1` and the chosen
// `X-Stream-Protocol-Version`; a request naming only other versions gets
// 403 "unable to upgrade: unable to negotiate protocol" (httpstream.Handshake),
// one without the upgrade headers 400. The connection then carries SPDY/3.1
// frames (github.com/moby/spdystream; the server end is spdystream's
// "server" side, even stream IDs). For each forwarded TCP connection the
// client opens two streams with headers
//
//	streamType: error | data
//	port:       the pod's port (1-65535)
//	requestID:  the same value for both streams of one connection
//
// The server replies to a stream with valid headers and resets one without
// (a missing or bad `port`, a `streamType` other than error or data). A
// stream without `requestID` (clients before 1.6) is paired by stream ID:
// an error stream's ID, a data stream's ID minus 2. A pair not complete
// within the stream creation timeout gets "timed out waiting for streams"
// on its error stream. Once a pair is complete the server dials the port
// and copies bytes both ways on the data stream; the error stream carries
// at most one message, `error forwarding port N to pod NAME, uid UID:
// CAUSE`, and is closed when the forward ends. The client half-closes the
// data stream when its local connection stops sending; the server then
// half-closes the pod connection (CloseWrite) and keeps sending what the
// pod answers until the pod closes, then closes the data stream.
//
// SPDY over WebSocket (KEP-4006, kubectl 1.31+; apimachinery
// util/proxy/streamtunnel.go, client-go tools/portforward/tunneling_*.go):
// the client sends a WebSocket upgrade (GET) with subprotocol
// `SPDY/3.1+portforward.k8s.io`; once accepted, the same SPDY frames as
// above travel inside WebSocket binary messages (any message boundaries;
// a text message is an error; a normal close is EOF). The upstream API
// server terminates the WebSocket and speaks plain SPDY to the kubelet;
// Serve accepts both, so a proxy may pass either through unchanged.
//
// The pure-WebSocket channel protocol (the kubelet's websocket.go; no
// kubectl uses it, other clients may): a WebSocket upgrade with
// subprotocol `v4.channel.k8s.io`, `v4.base64.channel.k8s.io` or none, the
// ports in the query (`port=80&port=8080` or `port=80,8080`; none is 400).
// Port i has data channel 2i and error channel 2i+1; the server's first
// message on each is the port, 2 bytes little-endian; each message is the
// channel byte then the payload (base64: a text message, the channel as
// an ASCII digit, the payload in base64). The WebSocket carries one
// connection per port and ends when they all have (channels.go).
//
// # Resources
//
// Every goroutine and connection Serve starts ends with the upgraded
// connection: when it closes (the client went away, the idle timeout),
// every pod connection is closed and every forward returns. Copies use
// 256 KiB buffers (one SPDY data frame per read), so a bulk transfer is a
// few large frames, not many small ones.
package portforward
