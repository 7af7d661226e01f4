//go:build linux

package helper

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// serve runs act conversations one after another over one stream, so that
// a call costs a process here rather than an exec through the engine.
// Each call is an act of its own, a child process that sees what an exec's
// act would: its conversation on stdin and stdout, ended on stdin by the
// host's TOver, and its environment (the TCall's pairs over serve's own).
// Its end is told by a TDone after all it wrote. Between calls a TPing is
// answered at once; the stream's end ends serve.
func serve(stdin io.Reader, stdout io.Writer) error {
	if fsRoot != "" {
		return errors.New("serve runs in a sandbox only: its calls are processes of their own")
	}
	in := protocol.NewReader(stdin)
	out := protocol.NewWriter(stdout)
	for {
		t, p, err := in.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t {
		case protocol.TPing:
			if err := out.Frame(protocol.TPong, nil); err != nil {
				return err
			}
			continue
		case protocol.TCall:
		default:
			return fmt.Errorf("expected a call from the host, got frame %q", t)
		}
		call, err := protocol.DecodeCall(p)
		if err != nil {
			return err
		}
		if err := serveCall(in, out, call); err != nil {
			return err
		}
	}
}

// serveCall runs one act as a child and relays its conversation: the
// host's frames (and the request's content) to its stdin until TOver, its
// stdout back unchanged, then a TDone with its exit code and stderr.
func serveCall(in *protocol.Reader, out *protocol.Writer, call *protocol.Call) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return err
	}
	child, err := procgroup.StartChild([]string{os.Args[0], "act"}, append(os.Environ(), call.Env...), inR, outW, errW)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		// The host reads this as an act that failed at once.
		return out.Frame(protocol.TDone, (&protocol.Done{Code: 127, Stderr: err.Error()}).Encode())
	}
	done := make(chan error, 1)
	go func() { done <- relayOut(child, outR, errR, out) }()
	relayErr := relayIn(in, inW)
	inW.Close()
	if err := <-done; err != nil {
		return err
	}
	return relayErr
}

// relayOut copies the act's stdout to the host as it comes and, once the
// act has ended, sends its TDone.
func relayOut(child *procgroup.Cmd, outR, errR *os.File, out *protocol.Writer) error {
	var stderr []byte
	var grab sync.WaitGroup
	grab.Add(1)
	go func() {
		defer grab.Done()
		defer errR.Close()
		stderr, _ = io.ReadAll(io.LimitReader(errR, protocol.MaxDoneStderr))
		_, _ = io.Copy(io.Discard, errR)
	}()
	_, copyErr := io.Copy(flushing{out}, outR)
	outR.Close()
	code := child.Wait()
	grab.Wait()
	if copyErr != nil {
		return copyErr
	}
	return out.Frame(protocol.TDone, (&protocol.Done{Code: uint64(code), Stderr: string(stderr)}).Encode())
}

// relayIn passes the host's frames to the act until TOver: the request
// with its content, then whatever the conversation sends. Once the act
// has stopped reading (it ended), the frames up to TOver are read and
// dropped, so that the next call starts at a frame's start.
func relayIn(in *protocol.Reader, inW *os.File) error {
	w := protocol.NewWriter(inW)
	gone := false // the act stopped reading
	for {
		t, p, err := in.Next()
		if err == io.EOF {
			return errors.New("the host went away during a call")
		}
		if err != nil {
			return err
		}
		if t == protocol.TOver {
			return nil
		}
		gone = gone || w.Frame(t, p) != nil
		if t != protocol.TRequest {
			continue
		}
		req, err := protocol.DecodeRequest(p)
		if err != nil {
			continue // the act refuses it
		}
		content := in.Raw(int64(req.ContentLen))
		gone = gone || w.Raw(content, int64(req.ContentLen)) != nil
		if _, err := io.Copy(io.Discard, content); err != nil {
			return err
		}
	}
}

// flushing writes the act's bytes straight through to the host.
type flushing struct{ w *protocol.Writer }

func (f flushing) Write(p []byte) (int, error) {
	n, err := f.w.Buffered().Write(p)
	if err != nil {
		return n, err
	}
	return n, f.w.Flush()
}
