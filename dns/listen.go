package dns

import (
	"errors"
	"net"
	"strconv"
)

// ListenUDPTCP binds UDP and TCP on one address, for Serve. With port 0
// the TCP listener takes the port the UDP socket got (retrying a few times
// when that port is busy for TCP).
func ListenUDPTCP(addr string) (net.PacketConn, net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, err
	}
	var lastErr error
	for range 10 {
		udp, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, err
		}
		p := port
		if p == "0" {
			p = strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
		}
		tcp, err := net.Listen("tcp", net.JoinHostPort(host, p))
		if err == nil {
			return udp, tcp, nil
		}
		udp.Close()
		lastErr = err
		if port != "0" {
			break
		}
	}
	return nil, nil, errors.Join(errors.New("dns: bind UDP and TCP on one port"), lastErr)
}
