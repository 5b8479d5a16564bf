package portforward

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/moby/spdystream"
)

// UpgradeHeader is what a client sends to upgrade to plain SPDY.
func UpgradeHeader() http.Header {
	h := http.Header{}
	h.Set("Connection", "Upgrade")
	h.Set("Upgrade", HeaderSpdy31)
	h.Set(HeaderProtocolVersion, ProtocolV1)
	return h
}

// Client is the client end of an upgraded portforward connection
// (client-go's PortForwarder without the listeners).
type Client struct {
	conn *spdystream.Connection
	nc   net.Conn
	next atomic.Int64
}

// NewClient runs SPDY's client side over an upgraded connection.
func NewClient(nc net.Conn) (*Client, error) {
	sc, err := spdystream.NewConnection(nc, false)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("portforward: SPDY connection: %w", err)
	}
	go sc.Serve(spdystream.NoOpStreamHandler)
	return &Client{conn: sc, nc: nc}, nil
}

// Close ends the connection and every forward on it.
func (c *Client) Close() error {
	err := c.conn.Close()
	c.nc.Close()
	return err
}

// Done is closed when the connection ends.
func (c *Client) Done() <-chan bool { return c.conn.CloseChan() }

// streamTimeout bounds the wait for the server's reply to a new stream.
const streamTimeout = 30 * time.Second

// Forward copies local to and from the pod's port over a new stream
// pair until either side is done (client-go's handleConnection), and
// returns the error the server sent on the error stream, if any (its
// message as is: "error forwarding port N to pod ..."). It closes local.
func (c *Client) Forward(local net.Conn, port uint16) error {
	defer local.Close()
	id := strconv.FormatInt(c.next.Add(1)-1, 10)
	h := http.Header{}
	h.Set(HeaderStreamType, StreamTypeError)
	h.Set(HeaderPort, strconv.Itoa(int(port)))
	h.Set(HeaderRequestID, id)
	es, err := c.create(h)
	if err != nil {
		return fmt.Errorf("error creating error stream for port %d: %w", port, err)
	}
	defer func() { _ = es.Reset() }()
	_ = es.Close() // the client never writes the error stream
	errc := make(chan error, 1)
	go func() {
		msg, err := io.ReadAll(es)
		switch {
		case err != nil && !errors.Is(err, io.EOF):
			errc <- fmt.Errorf("error reading from error stream for port %d: %w", port, err)
		case len(msg) > 0:
			errc <- errors.New(string(msg))
		default:
			errc <- nil
		}
	}()
	h.Set(HeaderStreamType, StreamTypeData)
	ds, err := c.create(h)
	if err != nil {
		return fmt.Errorf("error creating forwarding stream for port %d: %w", port, err)
	}
	remoteDone := make(chan struct{})
	localErr := make(chan struct{})
	go func() {
		_, _ = io.CopyBuffer(writerOnly{local}, ds, make([]byte, bufSize))
		close(remoteDone)
	}()
	go func() {
		defer func() { _ = ds.Close() }() // FIN: nothing more from us
		if _, err := io.CopyBuffer(ds, readerOnly{local}, make([]byte, bufSize)); err != nil && !errors.Is(err, net.ErrClosed) {
			close(localErr)
		}
	}()
	select {
	case <-remoteDone:
	case <-localErr:
	}
	_ = ds.Reset()
	select {
	case err := <-errc:
		return err
	case <-c.conn.CloseChan():
		return errors.New("lost connection to pod")
	}
}

func (c *Client) create(h http.Header) (*spdystream.Stream, error) {
	s, err := c.conn.CreateStream(h, nil, false)
	if err != nil {
		return nil, err
	}
	if err := s.WaitTimeout(streamTimeout); err != nil {
		return nil, err
	}
	return s, nil
}
