// Command watchforger is a hostile agent's program for the attack table:
// run inside a sandbox, it speaks to PID 1's watch socket as a scan
// would, and breaks the conversation every way it can, in a loop, until
// it is killed: a cut of a far generation taken and never acknowledged
// (holding the connection a while), a reset, a question left unfinished,
// and bytes that are no frame.
//
//	watchforger [-socket PATH]
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

func main() {
	socket := flag.String("socket", protocol.WatchSocket, "PID 1's watch socket")
	flag.Parse()
	var n atomic.Int64
	// Cuts of a far generation, taken and held unacknowledged.
	go func() {
		for {
			n.Add(forge(*socket, func(c net.Conn) {
				protocol.NewWriter(c).Frame(protocol.TRequest, (&protocol.WatchCut{Old: 0, New: 1 << 40}).Encode())
				r := protocol.NewReader(c)
				r.Expect(protocol.TPong)
				r.Expect(protocol.TResult)
				time.Sleep(time.Second) // never says it has the answer
			}))
		}
	}()
	// Resets, unfinished questions and bytes that are no frame, as fast
	// as PID 1 takes them.
	for {
		n.Add(forge(*socket, func(c net.Conn) {
			protocol.NewWriter(c).Frame(protocol.TRequest, (&protocol.WatchCut{Reset: true, New: 1}).Encode())
			protocol.NewReader(c).Expect(protocol.TPong)
		}))
		n.Add(forge(*socket, func(c net.Conn) { c.Write([]byte{protocol.TRequest, 0xff}) }))
		n.Add(forge(*socket, func(c net.Conn) { c.Write([]byte("not a frame at all\n")) }))
		// How many conversations it broke, for the test to see it runs.
		os.WriteFile("/tmp/forged", []byte(fmt.Sprintln(n.Load())), 0o644)
	}
}

// forge runs one broken conversation on a new connection, and counts it
// when it reached PID 1.
func forge(socket string, talk func(net.Conn)) int64 {
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		time.Sleep(100 * time.Millisecond)
		return 0
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	talk(c)
	return 1
}
