//go:build linux

package helper

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/inotify"
	"github.com/litterbox-dev/litterbox/internal/helper/manifest"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// Root is the directory the helper scans: the sandbox's copy of the repo.
const Root = "/src"

// root is Root, which unit tests point at a temp dir.
var root = Root

type frame struct {
	t byte
	p []byte
}

// session is one agent call: the request, the action, the scan and the
// transfer of what changed, over stdin and stdout.
type session struct {
	in  *protocol.Reader
	mu  sync.Mutex // out is written by the output forwarders too
	out *protocol.Writer
	// frames carries what the host sends once the request is read; it is
	// closed when stdin ends.
	frames chan frame
	req    *protocol.Request
	// old delivers the last manifest, nil when there is none.
	old chan *manifest.Manifest
	// changed: /src changed since the last call's scan (between).
	changed bool
}

func (s *session) send(t byte, p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Frame(t, p)
}

// act serves one call. Failures after the request are reported in a TFail
// frame, so the host can tell a broken sandbox from a broken pipe.
func act(stdin io.Reader, stdout io.Writer) int {
	reserveThreads(actThreads)
	s := &session{in: protocol.NewReader(stdin), out: protocol.NewWriter(stdout)}
	p, err := s.in.Expect(protocol.TRequest)
	if err != nil {
		fmt.Fprintln(os.Stderr, protocol.Name+":", err)
		return 1
	}
	req, err := protocol.DecodeRequest(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, protocol.Name+":", err)
		return 1
	}
	if req.Version != protocol.Version {
		fmt.Fprintf(os.Stderr, "%s: protocol version %d asked, this helper speaks %d\n", protocol.Name, req.Version, protocol.Version)
		return protocol.ExitWrongVersion
	}
	req.Path = mapped(req.Path)
	s.req = req
	if err := s.serve(); err != nil {
		s.send(protocol.TFail, []byte(err.Error()))
		return 1
	}
	return 0
}

func (s *session) serve() error {
	req := s.req
	if req.Op == protocol.OpSetup {
		// The host waits a bounded time for the Begin: a setup's baseline,
		// which reads the whole tree, comes after it.
		if err := s.send(protocol.TBegin, (&protocol.Begin{}).Encode()); err != nil {
			return err
		}
	}
	s.old = make(chan *manifest.Manifest, 1)
	if req.Op == protocol.OpSetup {
		// The baseline the setup command's changes are measured against:
		// the tree as copied in, which nothing else is writing. PID 1's
		// record of changes starts here too.
		inotify.Ask(&protocol.WatchCut{Reset: true, New: req.OldGen, Prune: req.Prune})
		list, err := manifest.Walk(root, manifest.Prune(req.Prune), "")
		if err != nil {
			return err
		}
		base := manifest.New(list, "")
		if err := base.Save(req.OldGen, req.OldGen); err != nil {
			return err
		}
		s.old <- base
	} else {
		// The last manifest loads while the action runs.
		go func() { s.old <- manifest.Load(req.OldGen) }()
		if err := s.between(); err != nil {
			return err
		}
	}
	res := &protocol.Result{}
	content := s.in.Raw(int64(req.ContentLen))
	switch req.Op {
	case protocol.OpWrite:
		res.Err = errText(writeFile(req.Path, content))
	case protocol.OpRemove:
		res.Err = errText(os.Remove(req.Path))
	case protocol.OpUpload:
		res.Err = errText(extractTar(content, req.Path))
	case protocol.OpSync:
		if s.changed {
			res.Err = protocol.SyncSkipped
		} else {
			res.Err = errText(applyTree(content))
		}
	case protocol.OpEdit:
		if err := editFile(req.Path, content, res); err != nil {
			return err
		}
	case protocol.OpRun, protocol.OpSetup, protocol.OpScan:
	default:
		return fmt.Errorf("unknown operation %q", req.Op)
	}
	if _, err := io.Copy(io.Discard, content); err != nil {
		return fmt.Errorf("reading the content: %w", err)
	}
	if res.Err != "" && res.ExitCode == 0 {
		res.ExitCode = 1
	}
	s.frames = make(chan frame, 4)
	go s.pump()
	// A setup without a command takes the baseline only: the tree came
	// prepared from the setup cache.
	if req.Op == protocol.OpRun || req.Op == protocol.OpSetup && req.Cmd != "" {
		gone := s.run(res)
		if gone {
			return errors.New("the host went away")
		}
	}
	if err := s.send(protocol.TResult, res.Encode()); err != nil {
		return err
	}
	return s.scan()
}

// between answers the request with a Begin, and when files in /src
// changed since the last call's scan, scans them at once, before the
// action and its content: the host commits them as a snapshot of their
// own, so that the call's snapshot holds the call's changes only. PID 1's
// watcher tells without a scan whether anything changed; one that cannot
// tell for now (just restarted) counts as a change, one that never can
// (no inotify) or does not answer (an older PID 1) as none, as before: the
// call's own scan reads everything then anyway.
func (s *session) between() error {
	req := s.req
	changed := false
	if req.Op != protocol.OpScan && !req.Rescan {
		d := inotify.Ask(&protocol.WatchCut{Peek: true, Old: req.OldGen})
		changed = d.Valid && len(d.Dirs) > 0 || !d.Valid && d.Reason != ""
	}
	s.changed = changed
	if err := s.send(protocol.TBegin, (&protocol.Begin{Between: changed}).Encode()); err != nil || !changed {
		return err
	}
	if err := s.scan(); err != nil {
		return err
	}
	// The action's scan starts from the manifest this one saved.
	req.OldGen, req.NewGen = req.NewGen, req.NewGen+1
	next := req.OldGen
	s.old = make(chan *manifest.Manifest, 1)
	go func() { s.old <- manifest.Load(next) }()
	return nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// pump reads the host's frames for the rest of the call.
func (s *session) pump() {
	defer close(s.frames)
	for {
		t, p, err := s.in.Next()
		if err != nil {
			return
		}
		s.frames <- frame{t, p}
	}
}

// expect waits for the host's next frame, which must be of type t. Before
// the content is read (a scan between calls) frames come straight from
// stdin; after, through pump.
func (s *session) expect(t byte) ([]byte, error) {
	if s.frames == nil {
		for {
			ft, p, err := s.in.Next()
			switch {
			case err != nil:
				return nil, err
			case ft == protocol.TCancel:
				continue
			case ft != t:
				return nil, fmt.Errorf("expected frame %q from the host, got %q", t, ft)
			}
			return p, nil
		}
	}
	for f := range s.frames {
		if f.t == protocol.TCancel {
			continue // the command is over already
		}
		if f.t != t {
			return nil, fmt.Errorf("expected frame %q from the host, got %q", t, f.t)
		}
		return f.p, nil
	}
	return nil, errors.New("the host went away")
}

// run runs the command in a session of its own and, whatever ends it (its
// exit, the timeout, the host's cancel, the host gone), kills every process
// it started, wherever it went (see procgroup.Strays), and stops reading
// its output soon after. It reports whether the host went away meanwhile.
func (s *session) run(res *protocol.Result) (hostGone bool) {
	req := s.req
	if _, err := os.Stat("/bin/sh"); err != nil {
		res.NoShell, res.ExitCode = true, 127
		return false
	}
	if fi, err := os.Stat(mapped(req.Dir)); err != nil || !fi.IsDir() {
		s.send(protocol.TStderr, []byte("workdir "+req.Dir+": no such directory\n"))
		res.ExitCode = 2
		return false
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		res.Err, res.ExitCode = err.Error(), 126
		return false
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		res.Err, res.ExitCode = err.Error(), 126
		return false
	}
	var tok [12]byte
	rand.Read(tok[:])
	marker := "LITTERBOX_CALL=" + hex.EncodeToString(tok[:])
	c, err := procgroup.Start([]string{"/bin/sh", "-c", req.Cmd}, mapped(req.Dir), os.Environ(), marker, outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		s.send(protocol.TStderr, []byte(err.Error()+"\n"))
		res.ExitCode = 126
		return false
	}
	// The saved streams' names start with the time, so they sort by age.
	tag := time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(tok[:3])
	outC, errC := newCapture(req.Cap, tag+".stdout"), newCapture(req.Cap, tag+".stderr")
	var fwd sync.WaitGroup
	fwd.Add(2)
	go func() { defer fwd.Done(); res.OutCut = s.forward(outR, protocol.TStdout, outC) }()
	go func() { defer fwd.Done(); res.ErrCut = s.forward(errR, protocol.TStderr, errC) }()
	exited := make(chan int, 1)
	go func() { exited <- c.Wait() }()
	var timeout <-chan time.Time
	if req.TimeoutMS > 0 {
		t := time.NewTimer(time.Duration(req.TimeoutMS) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	frames := s.frames
	for done := false; !done; {
		select {
		case res.ExitCode = <-exited:
			done = true
		case <-timeout:
			res.TimedOut = true
			c.Kill()
		case f, ok := <-frames:
			if !ok {
				hostGone = true
				frames = nil
				c.Kill()
			} else if f.t == protocol.TCancel {
				res.Cancelled = true
				c.Kill()
			}
		}
	}
	// Nothing the command started outlives it (servers are services).
	c.Kill()
	drain(&fwd, drainGrace, outR, errR)
	res.OutLog, res.OutLogPart = outC.savedAs()
	res.ErrLog, res.ErrLogPart = errC.savedAs()
	return hostGone
}

// drainGrace bounds how long the output is still read after the kill.
const drainGrace = 2 * time.Second

// drain waits for the forwarders to reach the end of the output, up to
// grace: a pipe end the kill could not reach (held by another exec's
// process, say) must not hold the call, nor the sandbox's lock. Then the
// readers stop where they are.
func drain(fwd *sync.WaitGroup, grace time.Duration, readers ...*os.File) {
	done := make(chan struct{})
	go func() { fwd.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	for _, r := range readers {
		_ = r.SetReadDeadline(time.Now())
	}
	<-done
}

// forward sends what r yields as frames of type t. A stream longer than
// the request's Cap is sent as its first half, a TCut counting what is
// left out, and its last half once the command is over; with Stream every
// byte is sent as it comes instead. Either way such a stream is saved
// whole in the sandbox (see capture). It returns the count left out.
func (s *session) forward(r *os.File, t byte, c *capture) (cut uint64) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			head := c.add(buf[:n])
			switch {
			case s.req.Stream:
				s.send(t, buf[:n])
			case len(head) > 0:
				s.send(t, head)
			}
		}
		if err != nil {
			break
		}
	}
	tail, cut := c.end()
	if s.req.Stream {
		return 0
	}
	if cut > 0 {
		s.send(protocol.TCut, (&protocol.Cut{Stream: t, N: cut}).Encode())
	}
	for len(tail) > 0 {
		n := min(len(tail), 32<<10)
		s.send(t, tail[:n])
		tail = tail[n:]
	}
	return cut
}

// writeFile replaces the file at p with content, making its directory.
func writeFile(p string, content io.Reader) error {
	if err := os.MkdirAll(path.Dir(p), 0o777); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sendChanges splits the list into frames well under MaxFrame.
func (s *session) sendChanges(list []protocol.Change) error {
	const budget = 4 << 20
	for {
		n, size := 0, 0
		for n < len(list) && size < budget {
			size += 40 + len(list[n].Path)
			n++
		}
		msg := &protocol.Changes{List: list[:n], More: n < len(list)}
		if err := s.send(protocol.TChanges, msg.Encode()); err != nil {
			return err
		}
		list = list[n:]
		if !msg.More {
			return nil
		}
	}
}

// sendFiles sends the files the host asked for, each read through a root
// of /src: no link, at any component, takes a read out of it (a file
// that moved so is sent as missing, and read again by the next call), and
// no lookup starts at / (where / is FUSE, each absolute one costs its
// daemon CPU: manifest.openWalker).
func (s *session) sendFiles(paths []string, cur *manifest.Manifest) error {
	if len(paths) == 0 {
		return nil
	}
	src, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer src.Close()
	for _, p := range paths {
		if err := s.sendFile(src, p, cur); err != nil {
			return err
		}
	}
	return nil
}

// sendFile sends the file p of src, one the host asked for. A file that
// changed size while it was read is sent as far as it goes (padded) and
// left out of the manifest, so the next call sends it again.
func (s *session) sendFile(src *os.Root, p string, cur *manifest.Manifest) error {
	h := &protocol.FileHeader{Path: p}
	if path.Clean(p) != p || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../") || p == ".." {
		h.Missing = true
		return s.send(protocol.TFile, h.Encode())
	}
	fi, err := src.Lstat(p)
	if err != nil {
		h.Missing = true
		cur.Drop(p)
		return s.send(protocol.TFile, h.Encode())
	}
	h.Mode = uint32(unixMode(fi))
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		if h.Link, err = src.Readlink(p); err != nil {
			h.Missing = true
			cur.Drop(p)
		}
		return s.send(protocol.TFile, h.Encode())
	case !fi.Mode().IsRegular():
		h.Missing = true
		return s.send(protocol.TFile, h.Encode())
	}
	f, err := manifest.OpenRegularIn(src, p)
	if err != nil {
		h.Missing = true
		cur.Drop(p)
		return s.send(protocol.TFile, h.Encode())
	}
	defer f.Close()
	h.Size = uint64(fi.Size())
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.out.Frame(protocol.TFile, h.Encode()); err != nil {
		return err
	}
	n, _ := io.Copy(s.out.Buffered(), io.LimitReader(f, int64(h.Size)))
	if n < int64(h.Size) {
		cur.Drop(p)
		if _, err := io.CopyN(s.out.Buffered(), zeros{}, int64(h.Size)-n); err != nil {
			return err
		}
	} else if after, err := f.Stat(); err != nil || after.Size() != fi.Size() || after.ModTime() != fi.ModTime() {
		cur.Drop(p)
	}
	return s.out.Flush()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// unixMode turns Go's file mode back into st_mode's type and permission bits.
func unixMode(fi os.FileInfo) uint32 {
	m := uint32(fi.Mode().Perm())
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		m |= protocol.ModeSymlink
	case fi.IsDir():
		m |= protocol.ModeDir
	case fi.Mode().IsRegular():
		m |= protocol.ModeRegular
	}
	return m
}
