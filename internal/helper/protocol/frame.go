// Package protocol is the conversation between Litterbox on the host and its
// helper inside a sandbox, over the stdin and stdout of one `docker exec -i`.
//
// Everything travels in frames: a type byte, a uvarint length and that many
// bytes of payload. Payloads are sequences of uvarints and length-prefixed
// byte strings, so any file name a Linux file system can hold (newlines, tabs,
// bytes that are not UTF-8) crosses unchanged, and nothing is parsed by lines.
//
// The helper runs as the sandbox user and an agent can replace it: the host
// must treat every frame it reads as hostile. Decoders here bound every length
// they read and never allocate more than the frame holds.
package protocol

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version. A helper that does not speak the host's
// version answers with ExitWrongVersion, and the host delivers its own.
const Version = 4

// ExitWrongVersion is the helper's exit code for a request of another version.
const ExitWrongVersion = 99

// Exit codes of the helper's commands besides 0 (done) and 1 (anything
// else, message on stderr): 2 bad arguments, 3 a directory where a file
// was wanted, 4 no such file.
const (
	ExitUsage   = 2
	ExitIsDir   = 3
	ExitMissing = 4
)

// ToolError is a helper command's refusal: its exit code and the message
// it prints on stderr.
type ToolError struct {
	Code int
	Msg  string
}

func (e *ToolError) Error() string { return e.Msg }

// Frame types.
const (
	// host -> helper
	TRequest = 'Q' // a Request, then Request.ContentLen raw bytes
	TCancel  = 'K' // kill the running command; no payload
	TPrune   = 'P' // a Prune, the host's answer to Dirs
	TSelect  = 'S' // a Select, the files the host wants

	// host -> helper over a kept stream (serve), around act conversations
	TCall = 'N' // a Call: the next act's environment; its conversation follows
	TOver = 'Y' // the call is over: the helper waits for the next Call
	TPing = 'I' // is the stream alive; a TPong answers at once

	// helper -> host
	TBegin   = 'B' // a Begin, the helper's first answer to a Request
	TStdout  = 'o' // a chunk of the command's stdout
	TStderr  = 'e' // a chunk of the command's stderr
	TCut     = 'x' // a Cut: output left out here; the stream's tail follows
	TResult  = 'R' // a Result, once the action is over
	TDirs    = 'D' // a Dirs: new directories and changed rule files
	TChanges = 'C' // a Changes: what differs from the last manifest
	TFile    = 'F' // a FileHeader, then FileHeader.Size raw bytes
	TEnd     = 'Z' // an End: no more files; the manifest is saved
	TFail    = '!' // a fatal error, as text; nothing follows

	// helper -> host over a kept stream
	TPong = 'i' // the answer to a TPing
	TDone = 'd' // a Done: the call's act has ended; its conversation is over
)

// MaxFrame bounds a frame's payload. Change lists of very large trees are
// split over several frames by the sender.
const MaxFrame = 16 << 20

// Writer writes frames.
type Writer struct{ w *bufio.Writer }

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 64<<10)} }

// Frame writes one frame and flushes it.
func (fw *Writer) Frame(t byte, payload []byte) error {
	if len(payload) > MaxFrame {
		return fmt.Errorf("frame %q of %d bytes exceeds %d", t, len(payload), MaxFrame)
	}
	var hdr [1 + binary.MaxVarintLen64]byte
	hdr[0] = t
	n := binary.PutUvarint(hdr[1:], uint64(len(payload)))
	if _, err := fw.w.Write(hdr[:1+n]); err != nil {
		return err
	}
	if _, err := fw.w.Write(payload); err != nil {
		return err
	}
	return fw.w.Flush()
}

// Raw writes bytes outside any frame (file contents after a TFile header).
func (fw *Writer) Raw(r io.Reader, n int64) error {
	if _, err := io.CopyN(fw.w, r, n); err != nil {
		return err
	}
	return fw.w.Flush()
}

// Reader reads frames.
type Reader struct {
	r *bufio.Reader
	// end, when set, is a frame type that ends the stream as EOF does
	// (a kept stream's end of one call, TDone); ended holds its payload
	// once read.
	end   byte
	ended []byte
	over  bool
}

// EndAt makes the stream end, for Next, Expect and Raw, at the next frame
// of type t, as if it were the end of the stream; Ended then gives that
// frame's payload. It also clears the end of an earlier call.
func (fr *Reader) EndAt(t byte) { fr.end, fr.ended, fr.over = t, nil, false }

// Ended is the payload of the frame EndAt named, once Next has read it.
func (fr *Reader) Ended() ([]byte, bool) { return fr.ended, fr.over }

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 64<<10)} }

// ErrFrame is a malformed frame.
var ErrFrame = errors.New("malformed frame")

// Next reads one frame. io.EOF means the stream ended cleanly between frames.
func (fr *Reader) Next() (byte, []byte, error) {
	if fr.over {
		return 0, nil, io.EOF
	}
	t, err := fr.r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, err := binary.ReadUvarint(fr.r)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: length of %q: %v", ErrFrame, t, noEOF(err))
	}
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("%w: %q frame of %d bytes exceeds %d", ErrFrame, t, n, MaxFrame)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(fr.r, buf); err != nil {
		return 0, nil, fmt.Errorf("%w: %q frame cut short: %v", ErrFrame, t, noEOF(err))
	}
	if fr.end != 0 && t == fr.end {
		fr.ended, fr.over = buf, true
		return 0, nil, io.EOF
	}
	return t, buf, nil
}

// Expect reads one frame of type t. A TFail frame becomes an error with its
// text.
func (fr *Reader) Expect(t byte) ([]byte, error) {
	got, p, err := fr.Next()
	if err != nil {
		return nil, noEOF(err)
	}
	if got == TFail && t != TFail {
		return nil, &FailError{Msg: string(p)}
	}
	if got != t {
		return nil, fmt.Errorf("%w: want %q, got %q", ErrFrame, t, got)
	}
	return p, nil
}

// Raw returns a reader of the next n raw bytes.
func (fr *Reader) Raw(n int64) io.Reader {
	if fr.over {
		return io.LimitReader(fr.r, 0)
	}
	return io.LimitReader(fr.r, n)
}

// FailError is the helper's report of a fatal error.
type FailError struct{ Msg string }

func (e *FailError) Error() string { return "sandbox helper: " + e.Msg }

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Buffered is the writer under the frames, for raw bytes written while the
// caller holds off other frames; Flush sends them.
func (fw *Writer) Buffered() io.Writer { return fw.w }

// Flush sends whatever is buffered.
func (fw *Writer) Flush() error { return fw.w.Flush() }
