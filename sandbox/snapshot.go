package sandbox

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/gitcli"
)

//go:embed script/agent.sh
var agentSource string

// agentScript is agent.sh without its comment lines. It travels on stdin, in
// front of the call's own input, so the argv stays one short line that -v can
// log: agentLoader reads exactly its length (read -r takes one byte at a
// time, dd with fullblock exactly n) and runs it with the call's arguments.
var agentScript = stripComments(agentSource)

const agentLoader = `IFS= read -r n && s=$(dd bs="$n" count=1 iflag=fullblock 2>/dev/null) && eval "$s"`

func stripComments(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// OutputCap is how much of each output stream of a command is kept.
const OutputCap = 256 << 10

// snapState is what the host remembers between snapshots of one sandbox. It
// lives in the git dir next to the sandbox's record.
type snapState struct {
	// Gen is the manifest generation in the container that matches Tip.
	Gen int `json:"gen"`
	// Tip is the branch commit the private index holds, TipTree its tree.
	Tip     string `json:"tip"`
	TipTree string `json:"tip_tree"`
	// Prune lists ignored directories (holding no tracked file) the
	// container does not scan.
	Prune []string `json:"prune,omitempty"`
}

func (m *Manager) snapDir(kind string) string { return filepath.Join(m.GitDir, "litterbox", kind) }

func (m *Manager) loadSnap(slug string) (snapState, error) {
	var st snapState
	data, err := os.ReadFile(filepath.Join(m.snapDir("snap"), slug+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

func (m *Manager) saveSnap(slug string, st snapState) error {
	return writeFileAtomic(filepath.Join(m.snapDir("snap"), slug+".json"), mustJSON(st))
}

func (m *Manager) index(slug string) gitcli.Index {
	return gitcli.Index(filepath.Join(m.snapDir("index"), slug))
}

func (m *Manager) mirror(slug string) string { return filepath.Join(m.snapDir("ignore"), slug) }

// action is one call of the in-container script.
type action struct {
	mode    string // bash, setup, write, rm, scan
	arg     string // workdir (bash, setup) or path (write, rm)
	cmd     string // bash, setup
	timeout time.Duration
	content io.Reader // write
	size    int64     // write
	message string    // snapshot subject and body source
}

// ActResult is what an agent action did.
type ActResult struct {
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// StdoutCut and StderrCut count the bytes dropped beyond OutputCap.
	StdoutCut int64 `json:"stdout_cut,omitempty"`
	StderrCut int64 `json:"stderr_cut,omitempty"`
	// Snapshot is the commit made for the call's changes, "" when nothing
	// git would track changed.
	Snapshot string `json:"snapshot"`

	// full: the container had no manifest to compare with (restarted), so
	// the candidates are every file and anything else in the index is gone.
	full bool
}

// Truncated reports whether output was cut.
func (r *ActResult) Truncated() bool { return r.StdoutCut > 0 || r.StderrCut > 0 }

// act runs one action in the sandbox and commits what it changed, holding the
// sandbox lock for the whole call.
func (m *Manager) act(ctx context.Context, slug string, a action) (*ActResult, error) {
	unlock, err := m.lock(ctx, slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return m.actLocked(ctx, slug, a)
}

func (m *Manager) actLocked(ctx context.Context, slug string, a action) (*ActResult, error) {
	st, err := m.loadSnap(slug)
	if err != nil {
		return nil, err
	}
	n := m.Names(slug)
	tmo := int64(a.timeout / time.Second)
	if tmo <= 0 {
		tmo = 1 << 31 // effectively none
	}
	argv := []string{"sh", "-c", agentLoader, "litterbox", a.mode, strconv.Itoa(st.Gen), strconv.Itoa(st.Gen + 1),
		strconv.Itoa(OutputCap), strconv.FormatInt(tmo, 10), a.arg, a.cmd}
	argv = append(argv, st.Prune...)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var engineErr strings.Builder
	execDone := make(chan error, 1)
	go func() {
		res, err := m.Provider.Exec(ctx, n.Container, dockercli.ExecSpec{Interactive: true, Cmd: argv},
			dockercli.Streams{Stdin: inR, Stdout: outW, Stderr: &engineErr})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("sandbox script exited with code %d: %s", res.ExitCode, firstLine(engineErr.String()))
		}
		inR.CloseWithError(errOrClosed(err))
		outW.CloseWithError(errOrEOF(err))
		execDone <- err
	}()
	// fail stops the conversation. When the engine refused the exec (no such
	// container, paused), that is the cause; otherwise err is, and the exec's
	// own failure is only its consequence.
	fail := func(err error) (*ActResult, error) {
		inW.CloseWithError(err)
		outR.CloseWithError(err)
		var engine *dockercli.Error
		if execErr := <-execDone; errors.As(execErr, &engine) {
			return nil, m.execError(ctx, slug, execErr)
		}
		return nil, err
	}

	if _, err := fmt.Fprintf(inW, "%d\n%s", len(agentScript), agentScript); err != nil {
		return fail(err)
	}
	if a.content != nil {
		if _, err := fmt.Fprintf(inW, "%d\n", a.size); err != nil {
			return fail(err)
		}
		if _, err := io.CopyN(inW, a.content, a.size); err != nil {
			return fail(fmt.Errorf("sending file content: %w", err))
		}
	}
	br := bufio.NewReaderSize(outR, 64<<10)
	res, cands, err := readResult(br)
	if err != nil {
		return fail(err)
	}
	ignores, err := readIgnores(br)
	if err != nil {
		return fail(err)
	}
	if res.full {
		if cands, err = m.addVanished(ctx, slug, &st, cands); err != nil {
			return fail(err)
		}
	}
	plan, err := m.plan(ctx, slug, &st, cands, ignores)
	if err != nil {
		return fail(err)
	}
	var sel strings.Builder
	for _, p := range plan.fetch {
		sel.WriteString(p)
		sel.WriteByte('\n')
	}
	sel.WriteByte('\n')
	if _, err := io.WriteString(inW, sel.String()); err != nil {
		return fail(err)
	}
	inW.Close()
	entries, err := m.receive(ctx, slug, br, plan)
	if err != nil {
		return fail(err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return fail(err)
	}
	if err := <-execDone; err != nil {
		return nil, m.execError(ctx, slug, err)
	}
	entries = append(entries, plan.remove...)
	commit, err := m.commit(ctx, slug, &st, entries, a.message)
	if err != nil {
		// The index may hold changes no commit has: rebuild it next time.
		os.Remove(string(m.index(slug)))
		st.Tip = ""
		return res, fmt.Errorf("the command ran, but its changes could not be committed (they are kept and retried on the next call): %w", err)
	}
	res.Snapshot = commit
	st.Gen++
	if err := m.saveSnap(slug, st); err != nil {
		return res, err
	}
	return res, nil
}

func errOrClosed(err error) error {
	if err == nil {
		return io.ErrClosedPipe
	}
	return err
}

func errOrEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// execError explains a failed docker exec in the sandbox's terms.
func (m *Manager) execError(ctx context.Context, slug string, err error) error {
	switch {
	case errors.Is(err, dockercli.ErrNoSuchContainer):
		return m.missingOrNotFound(ctx, slug)
	case errors.Is(err, dockercli.ErrPaused):
		return notRunning(slug, "paused")
	case errors.Is(err, dockercli.ErrNotRunning):
		// Podman does not say which: ask.
		if in, ierr := m.Provider.Inspect(ctx, m.Names(slug).Container); ierr == nil {
			return notRunning(slug, in.State)
		}
		return notRunning(slug, "exited")
	}
	return err
}

// notRunning says a sandbox in state cannot take commands until resumed.
func notRunning(slug string, state dockercli.State) error {
	word := "stopped"
	if state == "paused" {
		word = "paused"
	}
	return fmt.Errorf("sandbox '%s' is %s; it must be resumed first (litterbox resume %s)", slug, word, slug)
}

type candidate struct {
	op   byte // '+' changed, '-' vanished, 'd' new directory, '?' unchanged
	mode uint32
	path string
}

// addVanished adds a "-" candidate for every indexed path a full scan did not
// see: without the old manifest, deletions cannot be told apart otherwise.
func (m *Manager) addVanished(ctx context.Context, slug string, st *snapState, cands []candidate) ([]candidate, error) {
	if err := m.ensureIndex(ctx, slug, st); err != nil {
		return nil, err
	}
	all, err := m.Git.Staged(ctx, m.index(slug), []string{"."})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, c := range cands {
		seen[c.path] = true
	}
	for p := range all {
		if !seen[p] && !underAny(p, st.Prune) {
			cands = append(cands, candidate{op: '-', path: p})
		}
	}
	return cands, nil
}

// readResult parses the header, output and candidate list.
func readResult(br *bufio.Reader) (*ActResult, []candidate, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, nil, fmt.Errorf("reading the sandbox's answer: %w", unexpected(err))
	}
	f := strings.Fields(line)
	if len(f) != 9 || f[0] != "LBX" {
		return nil, nil, fmt.Errorf("unexpected answer from the sandbox: %q", strings.TrimSpace(line))
	}
	var nums [8]int64
	for i := range nums {
		if nums[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil || nums[i] < 0 && i != 0 {
			return nil, nil, fmt.Errorf("unexpected answer from the sandbox: %q", strings.TrimSpace(line))
		}
	}
	res := &ActResult{ExitCode: int(nums[0]), TimedOut: nums[1] == 1, StdoutCut: nums[3], StderrCut: nums[5], full: nums[7] == 1}
	read := func(n int64) ([]byte, error) {
		if n > 64<<20 {
			return nil, fmt.Errorf("sandbox answer too large (%d bytes)", n)
		}
		buf := make([]byte, n)
		_, err := io.ReadFull(br, buf)
		return buf, unexpected(err)
	}
	out, err1 := read(nums[2])
	errb, err2 := read(nums[4])
	cl, err3 := read(nums[6])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, nil, err
	}
	res.Stdout, res.Stderr = string(out), string(errb)
	cands, err := parseCandidates(string(cl))
	return res, cands, err
}

// parseCandidates reads the script's candidate lines. Paths are checked here:
// they come from the sandbox and must not be trusted.
func parseCandidates(s string) ([]candidate, error) {
	var out []candidate
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		var c candidate
		var rest string
		switch {
		case strings.HasPrefix(line, "+ "):
			f := strings.SplitN(line[2:], " ", 3)
			if len(f) != 3 {
				return nil, fmt.Errorf("bad candidate line %q", line)
			}
			mode, err := strconv.ParseUint(f[0], 16, 32)
			if err != nil {
				return nil, fmt.Errorf("bad candidate line %q", line)
			}
			c.op, c.mode, rest = '+', uint32(mode), f[2]
		case strings.HasPrefix(line, "- "), strings.HasPrefix(line, "d "), strings.HasPrefix(line, "? "):
			c.op, rest = line[0], line[2:]
		default:
			return nil, fmt.Errorf("bad candidate line %q", line)
		}
		if !validRepoPath(rest) {
			continue // never from busybox find; not ours to commit
		}
		c.path = rest
		out = append(out, c)
	}
	return out, nil
}

// validRepoPath reports whether p is a clean relative path git can store.
func validRepoPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.ContainsAny(p, "\x00\n") {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." || c == "." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

// readIgnores reads the cpio of changed .gitignore files.
func readIgnores(br *bufio.Reader) (map[string][]byte, error) {
	out := map[string][]byte{}
	cr := newCpioReader(br)
	for {
		h, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Size > 1<<20 || !validRepoPath(h.Name) || path.Base(h.Name) != ".gitignore" {
			continue
		}
		data, err := io.ReadAll(cr)
		if err != nil {
			return nil, err
		}
		out[h.Name] = data
	}
}

// plan decides, from the candidates, which files to fetch and which index
// entries to drop, and updates the ignore mirror and the prune list.
type planResult struct {
	fetch  []string
	remove []gitcli.Entry
	// unpruned are directories the scan skipped that are not ignored any
	// more: all their files are fetched ("dir/") and filtered on arrival.
	unpruned []string
}

func (m *Manager) plan(ctx context.Context, slug string, st *snapState, cands []candidate, ignores map[string][]byte) (*planResult, error) {
	p := &planResult{}
	if len(cands) == 0 {
		return p, nil
	}
	if err := m.ensureIndex(ctx, slug, st); err != nil {
		return nil, err
	}
	rulesChanged := len(ignores) > 0
	if err := m.updateMirror(slug, cands, ignores, &rulesChanged); err != nil {
		return nil, err
	}
	var files, dirs []string
	for _, c := range cands {
		if c.op == 'd' {
			dirs = append(dirs, c.path)
		} else {
			files = append(files, c.path)
		}
	}
	staged, err := m.Git.Staged(ctx, m.index(slug), files)
	if err != nil {
		return nil, err
	}
	var ask []string
	for _, c := range cands {
		if c.op == '+' || c.op == '?' {
			if _, tracked := staged[c.path]; !tracked {
				ask = append(ask, c.path)
			}
		}
	}
	for _, d := range dirs {
		ask = append(ask, d+"/")
	}
	if rulesChanged {
		for _, d := range st.Prune {
			ask = append(ask, d+"/")
		}
	}
	ignored, err := m.Git.Ignored(ctx, ensureDir(m.mirror(slug)), ask)
	if err != nil {
		return nil, err
	}
	for _, c := range cands {
		_, tracked := staged[c.path]
		switch c.op {
		case '+':
			if tracked || !ignored[c.path] {
				p.fetch = append(p.fetch, c.path)
			}
		case '?':
			if !tracked && !ignored[c.path] {
				p.fetch = append(p.fetch, c.path)
			}
		case '-':
			if tracked {
				p.remove = append(p.remove, gitcli.Entry{Path: c.path})
			}
		}
	}
	if rulesChanged {
		for _, d := range st.Prune {
			if !ignored[d+"/"] {
				p.unpruned = append(p.unpruned, d)
				p.fetch = append(p.fetch, d+"/")
			}
		}
	}
	return p, m.updatePrune(ctx, slug, st, dirs, ignored, rulesChanged)
}

// updatePrune keeps the topmost ignored directories that hold no tracked
// file, so later scans skip them (node_modules and the like).
func (m *Manager) updatePrune(ctx context.Context, slug string, st *snapState, dirs []string, ignored map[string]bool, rulesChanged bool) error {
	var keep []string
	for _, d := range st.Prune {
		if !rulesChanged || ignored[d+"/"] {
			keep = append(keep, d)
		}
	}
	var add []string
	for _, d := range dirs {
		if ignored[d+"/"] && !underAny(d, keep) && !underAny(d, add) {
			add = append(add, d)
		}
	}
	if len(add) > 0 {
		staged, err := m.Git.Staged(ctx, m.index(slug), add)
		if err != nil {
			return err
		}
		for _, d := range add {
			holds := false
			for p := range staged {
				if strings.HasPrefix(p, d+"/") {
					holds = true
					break
				}
			}
			if !holds {
				keep = append(keep, d)
			}
		}
	}
	slices.Sort(keep)
	st.Prune = keep
	return nil
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// updateMirror writes the sandbox's .gitignore files into the host-side
// mirror check-ignore reads them from, and drops deleted ones.
func (m *Manager) updateMirror(slug string, cands []candidate, ignores map[string][]byte, changed *bool) error {
	root := m.mirror(slug)
	for name, data := range ignores {
		dst := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	for _, c := range cands {
		if c.op == '-' && path.Base(c.path) == ".gitignore" {
			*changed = true
			if err := os.Remove(filepath.Join(root, filepath.FromSlash(c.path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// ensureIndex makes the private index hold the branch tip.
func (m *Manager) ensureIndex(ctx context.Context, slug string, st *snapState) error {
	if st.Tip != "" {
		if _, err := os.Stat(string(m.index(slug))); err == nil {
			return nil
		}
	}
	return m.resetIndex(ctx, slug, st)
}

func (m *Manager) resetIndex(ctx context.Context, slug string, st *snapState) error {
	ref := m.Names(slug).Ref
	tip, err := m.Git.RevParse(ctx, ref)
	if err != nil {
		return err
	}
	if tip == "" {
		return fmt.Errorf("branch %s is gone; the sandbox's changes cannot be committed (recreate it with: git branch %s <commit>)", m.Names(slug).Branch, m.Names(slug).Branch)
	}
	tree, err := m.Git.RevParse(ctx, tip+"^{tree}")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.snapDir("index"), 0o755); err != nil {
		return err
	}
	if err := m.Git.ReadTree(ctx, m.index(slug), tip); err != nil {
		return err
	}
	st.Tip, st.TipTree = tip, tree
	return nil
}

// receive reads the cpio of fetched files, stores them as blobs and returns
// their index entries.
func (m *Manager) receive(ctx context.Context, slug string, br *bufio.Reader, plan *planResult) ([]gitcli.Entry, error) {
	want := plan.fetch
	cr := newCpioReader(br)
	if len(want) == 0 {
		for {
			if _, err := cr.Next(); err != nil {
				return nil, ignoreEOF(err)
			}
		}
	}
	// One directory per sandbox, whose lock we hold: stable paths keep the
	// hash-object input the same from run to run.
	tmp := filepath.Join(m.snapDir("tmp"), slug)
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	wanted := map[string]bool{}
	for _, p := range want {
		wanted[p] = true
	}
	var entries []gitcli.Entry
	var files []string
	for {
		h, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !wanted[h.Name] && !(validRepoPath(h.Name) && underAny(h.Name, plan.unpruned)) {
			continue
		}
		var mode string
		switch h.Mode & cpioTypeMask {
		case cpioRegular:
			mode = "100644"
			if h.Mode&0o111 != 0 {
				mode = "100755"
			}
		case cpioSymlink:
			mode = "120000"
		default:
			continue
		}
		f := filepath.Join(tmp, strconv.Itoa(len(files)))
		if err := writeFrom(f, cr); err != nil {
			return nil, err
		}
		// git runs in the work tree root: a relative path keeps the input the
		// same wherever the repository is (transcripts replay).
		if rel, err := filepath.Rel(m.Root, f); err == nil {
			f = rel
		}
		files = append(files, f)
		entries = append(entries, gitcli.Entry{Mode: mode, Path: h.Name})
	}
	entries, files, err := m.dropIgnored(ctx, slug, plan, entries, files)
	if err != nil {
		return nil, err
	}
	ids, err := m.Git.HashObjects(ctx, files)
	if err != nil {
		return nil, err
	}
	for i := range entries {
		entries[i].ID = ids[i]
	}
	return entries, nil
}

// dropIgnored filters the files of un-pruned directories, which arrive
// unasked, through the ignore rules (a rule deeper down may still apply).
func (m *Manager) dropIgnored(ctx context.Context, slug string, plan *planResult, entries []gitcli.Entry, files []string) ([]gitcli.Entry, []string, error) {
	if len(plan.unpruned) == 0 {
		return entries, files, nil
	}
	var ask []string
	for _, e := range entries {
		if underAny(e.Path, plan.unpruned) {
			ask = append(ask, e.Path)
		}
	}
	ignored, err := m.Git.Ignored(ctx, m.mirror(slug), ask)
	if err != nil {
		return nil, nil, err
	}
	var keptE []gitcli.Entry
	var keptF []string
	for i, e := range entries {
		if !ignored[e.Path] {
			keptE = append(keptE, e)
			keptF = append(keptF, files[i])
		}
	}
	return keptE, keptF, nil
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func writeFrom(name string, r io.Reader) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func ensureDir(d string) string {
	_ = os.MkdirAll(d, 0o755)
	return d
}

// commit applies entries to the private index and, when the tree changed,
// commits it on the branch. A branch moved by someone else is never
// overwritten: the change is rebuilt on top of where it is now.
func (m *Manager) commit(ctx context.Context, slug string, st *snapState, entries []gitcli.Entry, message string) (string, error) {
	if len(entries) == 0 {
		return "", nil
	}
	ref := m.Names(slug).Ref
	for attempt := 0; ; attempt++ {
		if err := m.Git.UpdateIndex(ctx, m.index(slug), entries); err != nil {
			return "", err
		}
		tree, err := m.Git.WriteTree(ctx, m.index(slug))
		if err != nil {
			return "", err
		}
		if tree == st.TipTree {
			return "", nil
		}
		id, err := m.Git.CommitTree(ctx, gitcli.CommitSpec{
			Tree: tree, Parents: []string{st.Tip}, Message: message,
			Author: m.agentIdent(slug), Committer: m.committer(ctx, slug),
		})
		if err != nil {
			return "", err
		}
		err = m.Git.UpdateRef(ctx, ref, id, st.Tip, "litterbox snapshot")
		if errors.Is(err, gitcli.ErrRefMoved) && attempt < 3 {
			if err := m.resetIndex(ctx, slug, st); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", err
		}
		st.Tip, st.TipTree = id, tree
		return id, nil
	}
}

func (m *Manager) agentIdent(slug string) gitcli.Ident {
	return gitcli.Ident{Name: slug + " (litterbox)", Email: "litterbox@localhost"}
}

// committer is the user's identity when git has one, else the agent's, so
// snapshots work on machines with no git identity at all.
func (m *Manager) committer(ctx context.Context, slug string) gitcli.Ident {
	m.identOnce.Do(func() {
		id, err := m.Git.Identity(ctx)
		if err == nil && id.Name != "" && id.Email != "" {
			m.ident = &id
		}
	})
	if m.ident != nil {
		return gitcli.Ident{}
	}
	return m.agentIdent(slug)
}

// commitMessage builds "<kind>: <detail>" with a subject under 72 characters
// and the full detail in the body when the subject had to be shortened.
func commitMessage(kind, detail string) string {
	subject := kind + ": " + firstLine(detail)
	full := strings.TrimSpace(detail)
	if len(subject) < 72 && !strings.Contains(full, "\n") {
		return subject + "\n"
	}
	if len(subject) >= 72 {
		cut := 67
		for cut > 0 && !utf8RuneStart(subject[cut]) {
			cut--
		}
		subject = subject[:cut] + "..."
	} else {
		subject += " ..."
	}
	return subject + "\n\n" + full + "\n"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func mustJSON(v any) []byte {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(data, '\n')
}
