package protocol

import "fmt"

// Operations a Request asks for.
const (
	OpRun    = "run"    // run Cmd with sh -c in Dir
	OpSetup  = "setup"  // take the baseline manifest, then run
	OpWrite  = "write"  // write the content to Path
	OpRemove = "rm"     // remove Path
	OpUpload = "upload" // extract the content (a tar) next to Path
	OpEdit   = "edit"   // apply the edits in the content (Edits) to Path
	OpScan   = "scan"   // only look for changes
	OpSync   = "sync"   // apply the content (a tar of a tree's changes) to /src
)

// SyncRemove is the type flag of an entry of OpSync's tar that removes
// its path (tar leaves 'A' to 'Z' to vendors; a flag, unlike a PAX
// record, takes any name git can track, UTF-8 or not).
const SyncRemove = 'R'

// SyncSkipped is the Result.Err of an OpSync that applied nothing, because
// /src changed since the last scan: the host committed those changes first
// and computes the sync again.
const SyncSkipped = "sync skipped: /src changed since the last scan"

// Request is the host's one request per exec.
type Request struct {
	Version int
	Op      string
	// OldGen is the manifest the host last committed against, NewGen the
	// one this call saves.
	OldGen, NewGen uint64
	// Cap is how many bytes of each output stream are sent: past it, the
	// first half as it comes, a Cut, then the last half once the command is
	// over. With Stream every byte is sent as it comes instead. Either way,
	// a stream longer than Cap is saved whole in the sandbox (Result.OutLog).
	Cap       uint64
	Stream    bool
	TimeoutMS uint64
	Dir       string // run: working directory
	Cmd       string // run: the shell command
	Path      string // write, rm, upload: absolute path
	// ContentLen raw bytes follow the frame (write: the file, upload: a tar).
	ContentLen uint64
	// Prune lists directories under /src (relative) the scan skips: ignored
	// ones holding nothing tracked, and submodules.
	Prune []string
	// MaxFile is the largest file the host commits: the helper does not
	// hash a bigger one, whose content the host will not ask for.
	MaxFile uint64
	// Measure asks for the size of the skipped directories as they are
	// now, not as last measured: the host holds /src over its disk guard.
	Measure bool
	// Rescan asks for a full scan, every file reported: the host held
	// back files past the call's budget, which the last manifest records.
	Rescan bool
}

// Encode returns the payload of a TRequest frame.
func (r *Request) Encode() []byte {
	var e enc
	e.uint(uint64(r.Version))
	e.str(r.Op)
	e.uint(r.OldGen)
	e.uint(r.NewGen)
	e.uint(r.Cap)
	e.bool(r.Stream)
	e.uint(r.TimeoutMS)
	e.str(r.Dir)
	e.str(r.Cmd)
	e.str(r.Path)
	e.uint(r.ContentLen)
	e.strs(r.Prune)
	e.uint(r.MaxFile)
	e.bool(r.Measure)
	e.bool(r.Rescan)
	return e.b
}

// DecodeRequest parses a TRequest payload. Only the version is read when it
// is not Version, so a newer host gets ExitWrongVersion, not a parse error.
func DecodeRequest(p []byte) (*Request, error) {
	d := dec{b: p}
	r := &Request{Version: int(d.uint())}
	if d.err == nil && r.Version != Version {
		return r, nil
	}
	r.Op = d.str()
	r.OldGen = d.uint()
	r.NewGen = d.uint()
	r.Cap = d.uint()
	r.Stream = d.bool()
	r.TimeoutMS = d.uint()
	r.Dir = d.str()
	r.Cmd = d.str()
	r.Path = d.str()
	r.ContentLen = d.uint()
	r.Prune = d.strs()
	r.MaxFile = d.uint()
	r.Measure = d.bool()
	r.Rescan = d.bool()
	return r, d.done()
}

// Result is how the action ended.
type Result struct {
	ExitCode  int
	TimedOut  bool
	Cancelled bool
	// OutCut and ErrCut count the bytes left out between head and tail.
	OutCut, ErrCut uint64
	// OutLog and ErrLog name the files in the sandbox that hold a stream
	// longer than Cap ("" when it was not, or could not be saved); with
	// OutLogPart or ErrLogPart they hold only its first MaxSaved bytes.
	OutLog, ErrLog         string
	OutLogPart, ErrLogPart bool
	// NoShell: the image has no /bin/sh, so nothing ran.
	NoShell bool
	// Err is why a write, rm, upload or edit failed ("" when it did not).
	Err string
	// Replaced counts the replacements an edit made (the edited file's
	// size when it stopped at EditOverMax).
	Replaced uint64
}

// Encode returns the payload of a TResult frame.
func (r *Result) Encode() []byte {
	var e enc
	e.int(int64(r.ExitCode))
	e.bool(r.TimedOut)
	e.bool(r.Cancelled)
	e.uint(r.OutCut)
	e.uint(r.ErrCut)
	e.bool(r.NoShell)
	e.str(r.Err)
	e.str(r.OutLog)
	e.str(r.ErrLog)
	e.bool(r.OutLogPart)
	e.bool(r.ErrLogPart)
	e.uint(r.Replaced)
	return e.b
}

// DecodeResult parses a TResult payload.
func DecodeResult(p []byte) (*Result, error) {
	d := dec{b: p}
	r := &Result{ExitCode: int(d.int()), TimedOut: d.bool(), Cancelled: d.bool(), OutCut: d.uint(), ErrCut: d.uint(), NoShell: d.bool(), Err: d.str()}
	r.OutLog, r.ErrLog = d.str(), d.str()
	r.OutLogPart, r.ErrLogPart = d.bool(), d.bool()
	r.Replaced = d.uint()
	return r, d.done()
}

// Begin is the helper's first answer to a Request, before the host sends
// the request's content. With Between, files in /src changed since the
// last call's scan (a background command, a person's docker exec, a call
// cut short): a scan of them follows at once, from OldGen to OldGen+1,
// which the host commits as a snapshot of its own; the action then runs
// and is scanned from OldGen+1 to NewGen+1.
type Begin struct {
	Between bool
}

// Encode returns the payload of a TBegin frame.
func (b *Begin) Encode() []byte {
	var e enc
	e.bool(b.Between)
	return e.b
}

// DecodeBegin parses a TBegin payload.
func DecodeBegin(p []byte) (*Begin, error) {
	d := dec{b: p}
	b := &Begin{Between: d.bool()}
	return b, d.done()
}

// Call opens one act conversation over a kept stream (the helper's serve):
// the act runs with the serve's environment and Env (NAME=VALUE), which
// an exec would have set.
type Call struct {
	Env []string
}

// Encode returns the payload of a TCall frame.
func (c *Call) Encode() []byte {
	var e enc
	e.strs(c.Env)
	return e.b
}

// DecodeCall parses a TCall payload.
func DecodeCall(p []byte) (*Call, error) {
	d := dec{b: p}
	c := &Call{Env: d.strs()}
	return c, d.done()
}

// Done ends one act conversation over a kept stream: the act's exit code
// and the start of what it printed on stderr (MaxDoneStderr bytes), as an
// exec's end would have told.
type Done struct {
	Code   uint64
	Stderr string
}

// MaxDoneStderr bounds the stderr a Done carries.
const MaxDoneStderr = 4 << 10

// Encode returns the payload of a TDone frame.
func (m *Done) Encode() []byte {
	var e enc
	e.uint(m.Code)
	e.str(m.Stderr)
	return e.b
}

// DecodeDone parses a TDone payload.
func DecodeDone(p []byte) (*Done, error) {
	d := dec{b: p}
	m := &Done{Code: d.uint(), Stderr: d.str()}
	return m, d.done()
}

// Cut stands where a stream's output was left out: N bytes of the stream
// (TStdout or TStderr) between what came before and what follows.
type Cut struct {
	Stream byte
	N      uint64
}

// Encode returns the payload of a TCut frame.
func (c *Cut) Encode() []byte {
	var e enc
	e.uint(uint64(c.Stream))
	e.uint(c.N)
	return e.b
}

// DecodeCut parses a TCut payload.
func DecodeCut(p []byte) (*Cut, error) {
	d := dec{b: p}
	c := &Cut{Stream: byte(min(d.uint(), 255)), N: d.uint()}
	if err := d.done(); err != nil {
		return nil, err
	}
	if c.Stream != TStdout && c.Stream != TStderr {
		return nil, fmt.Errorf("cut of an unknown stream %q", c.Stream)
	}
	return c, nil
}

// RuleFile is a .gitignore or .gitattributes that is new, changed or gone.
type RuleFile struct {
	Path    string
	Data    []byte
	Deleted bool
}

// MaxRuleFile bounds the content of a rule file the helper sends; a larger
// one is sent empty, as if it held no rules.
const MaxRuleFile = 1 << 20

// Dirs is the first half of a scan: the directories that are new since the
// last manifest (all of them after a restart, with Full set) and the rule
// files that changed, so the host can tell ignored directories to skip
// before any file in them is looked at.
type Dirs struct {
	Full  bool
	New   []string
	Rules []RuleFile
	// Read counts the directories this scan read; fewer than all when PID 1
	// could tell which changed.
	Read uint64
	// More says another Dirs follows with the rest of the lists: a tree
	// of many long directory names does not fit one frame (see Split).
	More bool
}

// Encode returns the payload of a TDirs frame.
func (m *Dirs) Encode() []byte {
	var e enc
	e.bool(m.Full)
	e.strs(m.New)
	e.uint(uint64(len(m.Rules)))
	for _, r := range m.Rules {
		e.str(r.Path)
		e.bytes(r.Data)
		e.bool(r.Deleted)
	}
	e.uint(m.Read)
	e.bool(m.More)
	return e.b
}

// dirsBudget is what one Dirs frame carries before the rest goes in the
// next, well under MaxFrame (a rule file is at most MaxRuleFile).
const dirsBudget = 4 << 20

// Split cuts m into Dirs that each fit a frame, all but the last with
// More set; Full and Read travel in the first.
func (m *Dirs) Split() []*Dirs {
	cur := &Dirs{Full: m.Full, Read: m.Read}
	out := []*Dirs{cur}
	size := 0
	next := func(n int) {
		if size+n > dirsBudget && size > 0 {
			cur.More = true
			cur = &Dirs{}
			out = append(out, cur)
			size = 0
		}
		size += n
	}
	for _, d := range m.New {
		next(len(d) + 10)
		cur.New = append(cur.New, d)
	}
	for _, r := range m.Rules {
		next(len(r.Path) + len(r.Data) + 21)
		cur.Rules = append(cur.Rules, r)
	}
	return out
}

// Join adds the lists of a Dirs that followed m (More) to m.
func (m *Dirs) Join(next *Dirs) {
	m.New = append(m.New, next.New...)
	m.Rules = append(m.Rules, next.Rules...)
	m.More = next.More
}

// DecodeDirs parses a TDirs payload.
func DecodeDirs(p []byte) (*Dirs, error) {
	d := dec{b: p}
	m := &Dirs{Full: d.bool(), New: d.strs()}
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail("rule count")
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		m.Rules = append(m.Rules, RuleFile{Path: d.str(), Data: d.bytes(), Deleted: d.bool()})
	}
	m.Read = d.uint()
	// More came later: a helper that predates it sends one frame, and
	// the protocol's version stays, so a running sandbox's helper is kept.
	if d.err == nil && len(d.b) > 0 {
		m.More = d.bool()
	}
	return m, d.done()
}

// Prune is the host's answer to Dirs.
type Prune struct {
	// Add are directories to skip from now on (with everything below).
	Add []string
	// Expand are directories skipped until now that the scan must enter;
	// everything found in them is reported as new.
	Expand []string
	// Requery are directories whose ignore rules changed: every file under
	// them is reported, changed or not.
	Requery []string
}

// Encode returns the payload of a TPrune frame.
func (m *Prune) Encode() []byte {
	var e enc
	e.strs(m.Add)
	e.strs(m.Expand)
	e.strs(m.Requery)
	return e.b
}

// DecodePrune parses a TPrune payload.
func DecodePrune(p []byte) (*Prune, error) {
	d := dec{b: p}
	m := &Prune{Add: d.strs(), Expand: d.strs(), Requery: d.strs()}
	return m, d.done()
}

// Change ops.
const (
	Changed = '+' // new or changed file or symlink; ID is its blob id
	Removed = '-' // gone (or not a file any more)
	Listed  = '?' // unchanged, listed because its ignore rules changed
)

// Change is one entry of a Changes list.
type Change struct {
	Op   byte
	Mode uint32 // Linux st_mode
	Size uint64
	// ID is the git blob id of the content (a symlink's target), as the
	// helper computed it: a hint that spares a transfer, never stored.
	ID   [20]byte
	Path string
}

// Changes is the second half of a scan. A long list spans several frames;
// More says another follows.
type Changes struct {
	List []Change
	More bool
}

// Encode returns the payload of a TChanges frame.
func (m *Changes) Encode() []byte {
	var e enc
	e.bool(m.More)
	e.uint(uint64(len(m.List)))
	for _, c := range m.List {
		e.b = append(e.b, c.Op)
		e.uint(uint64(c.Mode))
		e.uint(c.Size)
		e.b = append(e.b, c.ID[:]...)
		e.str(c.Path)
	}
	return e.b
}

// DecodeChanges parses a TChanges payload.
func DecodeChanges(p []byte) (*Changes, error) {
	d := dec{b: p}
	m := &Changes{More: d.bool()}
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail("change count")
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		var c Change
		if len(d.b) < 1 {
			d.fail("change")
			break
		}
		c.Op = d.b[0]
		d.b = d.b[1:]
		mode := d.uint()
		c.Size = d.uint()
		if mode > 1<<32-1 {
			d.fail("mode")
		}
		c.Mode = uint32(mode)
		if d.err == nil && len(d.b) < 20 {
			d.fail("blob id")
		}
		if d.err != nil {
			break
		}
		copy(c.ID[:], d.b[:20])
		d.b = d.b[20:]
		c.Path = d.str()
		switch c.Op {
		case Changed, Removed, Listed:
		default:
			d.fail(fmt.Sprintf("change op %q", c.Op))
		}
		m.List = append(m.List, c)
	}
	return m, d.done()
}

// End closes a scan: the manifest is saved. It says how many bytes /src
// holds, as far as the helper knows, for the host's disk guard.
type End struct {
	// Files sums the sizes of the files the scan saw, when Counted (a scan
	// that found nothing changed did not look).
	Files   uint64
	Counted bool
	// Pruned sums the sizes under the directories scans skip, as PID 1
	// last measured them, when PrunedKnown.
	Pruned      uint64
	PrunedKnown bool
}

// Encode returns the payload of a TEnd frame.
func (m *End) Encode() []byte {
	var e enc
	e.uint(m.Files)
	e.bool(m.Counted)
	e.uint(m.Pruned)
	e.bool(m.PrunedKnown)
	return e.b
}

// DecodeEnd parses a TEnd payload.
func DecodeEnd(p []byte) (*End, error) {
	d := dec{b: p}
	m := &End{Files: d.uint(), Counted: d.bool(), Pruned: d.uint(), PrunedKnown: d.bool()}
	return m, d.done()
}

// Select names the files the host wants sent.
type Select struct{ Paths []string }

// Encode returns the payload of a TSelect frame.
func (m *Select) Encode() []byte {
	var e enc
	e.strs(m.Paths)
	return e.b
}

// DecodeSelect parses a TSelect payload.
func DecodeSelect(p []byte) (*Select, error) {
	d := dec{b: p}
	m := &Select{Paths: d.strs()}
	return m, d.done()
}

// FileHeader precedes a file's content: Size raw bytes for a regular file,
// the target for a symlink (Size is then 0). Missing says the file vanished
// between the scan and the transfer.
type FileHeader struct {
	Path    string
	Mode    uint32
	Size    uint64
	Link    string
	Missing bool
}

// Encode returns the payload of a TFile frame.
func (h *FileHeader) Encode() []byte {
	var e enc
	e.str(h.Path)
	e.uint(uint64(h.Mode))
	e.uint(h.Size)
	e.str(h.Link)
	e.bool(h.Missing)
	return e.b
}

// DecodeFileHeader parses a TFile payload.
func DecodeFileHeader(p []byte) (*FileHeader, error) {
	d := dec{b: p}
	h := &FileHeader{Path: d.str()}
	mode := d.uint()
	if mode > 1<<32-1 {
		d.fail("mode")
	}
	h.Mode = uint32(mode)
	h.Size = d.uint()
	h.Link = d.str()
	h.Missing = d.bool()
	return h, d.done()
}

// File types of Linux st_mode, which Change.Mode and FileHeader.Mode carry.
const (
	ModeType    = 0o170000
	ModeRegular = 0o100000
	ModeDir     = 0o040000
	ModeSymlink = 0o120000
)

// EgressSocket is where a sandbox with an allowlist reaches its egress
// proxy: a socket in a volume the proxy's container shares with it, since
// the sandbox itself has no network. EgressPort is where PID 1 forwards to
// it from the sandbox's loopback, the address of its HTTP_PROXY.
const (
	EgressDir    = "/run/litterbox"
	EgressSocket = EgressDir + "/egress.sock"
	EgressPort   = "3128"
	// EgressControl is where the egress proxy takes its secrets: an
	// abstract socket, in the proxy container's network namespace, which
	// the sandbox does not share.
	EgressControl = "@litterbox-egress-control"
)

// WatchSocket is where a sandbox's PID 1 answers WatchCut requests: it
// watches /src with inotify, so a scan reads only the directories that
// changed since the manifest it compares with. Its name changes with the
// conversation on it (inotify.Ask): a PID 1 of an older build, in a
// sandbox made before, is not found, and the scan reads everything.
const WatchSocket = "/tmp/.litterbox/watch2.sock"

// WatchCut asks PID 1 which directories changed since the scan of
// manifest Old, closing the record of changes for manifest New. Reset
// starts the record afresh (a full scan follows). Prune are the
// directories scans skip, which need no watching.
type WatchCut struct {
	Reset    bool
	Old, New uint64
	Prune    []string
	// Measure asks for the skipped directories to be measured now. It is
	// sent only when set, which a PID 1 of an older helper cannot read.
	Measure bool
	// Peek asks only which directories changed since the last cut, cutting
	// nothing. Sent only when set, like Measure: an older PID 1 does not
	// answer it, which tells nothing changed.
	Peek bool
}

// Encode returns the payload of a TRequest frame on the watch socket.
func (m *WatchCut) Encode() []byte {
	var e enc
	e.bool(m.Reset)
	e.uint(m.Old)
	e.uint(m.New)
	e.strs(m.Prune)
	if m.Measure || m.Peek {
		e.bool(m.Measure)
	}
	if m.Peek {
		e.bool(true)
	}
	return e.b
}

// DecodeWatchCut parses a WatchCut.
func DecodeWatchCut(p []byte) (*WatchCut, error) {
	d := dec{b: p}
	m := &WatchCut{Reset: d.bool(), Old: d.uint(), New: d.uint(), Prune: d.strs()}
	if d.err == nil && len(d.b) > 0 {
		m.Measure = d.bool()
	}
	if d.err == nil && len(d.b) > 0 {
		m.Peek = d.bool()
	}
	return m, d.done()
}

// WatchDirty is PID 1's answer: the directories (relative to /src, "" for
// /src itself) in which something changed, or Valid false when it cannot
// tell (just started, too many events, no watches left) and the scan must
// read everything.
type WatchDirty struct {
	Valid  bool
	Dirs   []string
	Reason string
	// Pruned is the size of what lies under the skipped directories, as
	// last measured, when PrunedKnown. A PID 1 of an older helper (the
	// helper is replaced, PID 1 runs until the sandbox restarts) does not
	// send it.
	Pruned      uint64
	PrunedKnown bool
}

// Encode returns the payload of a TResult frame on the watch socket.
func (m *WatchDirty) Encode() []byte {
	var e enc
	e.bool(m.Valid)
	e.strs(m.Dirs)
	e.str(m.Reason)
	e.uint(m.Pruned)
	e.bool(m.PrunedKnown)
	return e.b
}

// DecodeWatchDirty parses a WatchDirty, with or without the sizes.
func DecodeWatchDirty(p []byte) (*WatchDirty, error) {
	d := dec{b: p}
	m := &WatchDirty{Valid: d.bool(), Dirs: d.strs(), Reason: d.str()}
	if d.err == nil && len(d.b) > 0 {
		m.Pruned, m.PrunedKnown = d.uint(), d.bool()
	}
	return m, d.done()
}

// Edits is the content of an OpEdit request: replacements applied in
// order to the file at Path, all or none, in the one exec that scans what
// they changed (a read of the file and a write would be two).
type Edits struct {
	// Max is the largest file the edit reads, MaxOut the largest it
	// writes.
	Max, MaxOut uint64
	List        []Edit
}

// Edit replaces Old, which must occur once, or everywhere with All.
type Edit struct {
	Old, New string
	All      bool
}

// An edit's Result.ExitCode says where it stopped, Result.Err why.
const (
	EditWriteFailed = 1 // the edited file could not be written
	EditRefused     = 2 // the edits do not apply
	EditReadFailed  = 3 // the file could not be read
	EditMissing     = 4 // there is no such file
	EditMissed      = 5 // an Old is not in the file; Err shows the lines most like it
	EditOverMax     = 6 // the edited file would be over MaxOut; Replaced is its size
)

// Encode returns the content of an OpEdit request.
func (m *Edits) Encode() []byte {
	var e enc
	e.uint(m.Max)
	e.uint(m.MaxOut)
	e.uint(uint64(len(m.List)))
	for _, x := range m.List {
		e.str(x.Old)
		e.str(x.New)
		e.bool(x.All)
	}
	return e.b
}

// DecodeEdits parses the content of an OpEdit request.
func DecodeEdits(p []byte) (*Edits, error) {
	d := dec{b: p}
	m := &Edits{Max: d.uint(), MaxOut: d.uint()}
	n := d.uint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.fail("edit count")
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		m.List = append(m.List, Edit{Old: d.str(), New: d.str(), All: d.bool()})
	}
	return m, d.done()
}
