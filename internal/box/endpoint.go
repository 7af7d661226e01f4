package box

import (
	"net"
	"net/url"
)

// RemoteHost is the host name of a TCP or SSH endpoint on another machine, or
// "" when the engine runs on this one (a socket, or a loopback address).
func RemoteHost(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "tcp" && u.Scheme != "ssh" && u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	h := u.Hostname()
	if h == "localhost" {
		return ""
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return ""
	}
	return h
}
