//go:build linux

package helper

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// hostFrames is what a host sends over a kept stream for one call and the
// start of the next: a request with its content, a cancel, the TOver, then
// the next TCall.
// It returns the stream and the part of it the act is given.
func hostFrames(t *testing.T) (stream *bytes.Buffer, call []byte) {
	var b bytes.Buffer
	w := protocol.NewWriter(&b)
	req := &protocol.Request{Version: protocol.Version, Op: protocol.OpWrite, Path: "/src/f", ContentLen: 5}
	must(t, w.Frame(protocol.TRequest, req.Encode()))
	must(t, w.Raw(bytes.NewReader([]byte("hello")), 5))
	must(t, w.Frame(protocol.TCancel, nil))
	call = bytes.Clone(b.Bytes())
	must(t, w.Frame(protocol.TOver, nil))
	must(t, w.Frame(protocol.TCall, (&protocol.Call{Env: []string{"A=1"}}).Encode()))
	return &b, call
}

// relayIn gives the act the call's frames and content, exactly, and stops
// at the TOver: the next call's frames stay on the stream.
func TestRelayInStopsAtOver(t *testing.T) {
	stream, want := hostFrames(t)
	in := protocol.NewReader(stream)
	r, w, err := os.Pipe()
	must(t, err)
	got := make(chan []byte)
	go func() { all, _ := io.ReadAll(r); got <- all }()
	must(t, relayIn(in, w))
	w.Close()
	if g := <-got; !bytes.Equal(g, want) {
		t.Errorf("the act got %q, want %q", g, want)
	}
	if typ, _, err := in.Next(); err != nil || typ != protocol.TCall {
		t.Errorf("next on the stream: %q %v, want the next call", typ, err)
	}
}

// An act that stopped reading (it ended) does not stop the relay before
// the TOver, or the next call would start inside this one's frames.
func TestRelayInOutlivesTheAct(t *testing.T) {
	stream, _ := hostFrames(t)
	in := protocol.NewReader(stream)
	r, w, err := os.Pipe()
	must(t, err)
	r.Close()
	must(t, relayIn(in, w))
	if typ, _, err := in.Next(); err != nil || typ != protocol.TCall {
		t.Errorf("next on the stream: %q %v, want the next call", typ, err)
	}
}

// A stream that ends inside a call is the host gone.
func TestRelayInHostGone(t *testing.T) {
	var b bytes.Buffer
	must(t, protocol.NewWriter(&b).Frame(protocol.TCancel, nil))
	r, w, err := os.Pipe()
	must(t, err)
	go io.Copy(io.Discard, r)
	if err := relayIn(protocol.NewReader(&b), w); err == nil {
		t.Error("no error for a stream that ended inside a call")
	}
}
