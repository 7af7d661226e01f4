//go:build linux

package helper

import (
	"bufio"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/inotify"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// settlePoll is how often settle asks PID 1 what changed: a question on a
// local socket, cheap beside the commit it may lead to.
const settlePoll = 250 * time.Millisecond

// settle prints a line each time the files under /src changed and then
// stayed still for quiet, or kept changing for most: `litterbox run`
// commits at each line and answers with one of its own once the commit is
// made, which empties PID 1's record of changes. It ends when its stdin
// does (the host is done, or gone), and then ends the session: every
// process carrying the session's marker (its own environment's) and every
// process below one. The host's end of that stdin is litterbox itself, so
// a session whose litterbox was killed (kill -9, a closed laptop's lost
// engine connection) ends with it instead of running on unseen.
func settle(c protocol.CmdSettle, stdin io.Reader, stdout io.Writer) error {
	if tok := os.Getenv(protocol.SessionVar); tok != "" {
		defer procgroup.KillMarked(protocol.SessionVar + "=" + tok)
	}
	acks := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			acks <- struct{}{}
		}
		close(acks)
	}()
	s := settler{quiet: c.Quiet, most: c.Most}
	tick := time.NewTicker(settlePoll)
	defer tick.Stop()
	for {
		select {
		case _, ok := <-acks:
			if !ok {
				return nil
			}
			continue // an answer to no line: ignored
		case <-tick.C:
		}
		// Old past every manifest: what changed since the last commit.
		if !s.due(time.Now(), inotify.Ask(&protocol.WatchCut{Peek: true, Old: math.MaxUint64})) {
			continue
		}
		if _, err := io.WriteString(stdout, "changed\n"); err != nil {
			return err
		}
		if _, ok := <-acks; !ok {
			return nil
		}
		s = settler{quiet: c.Quiet, most: c.Most}
	}
}

// settler decides from PID 1's answers when a change is worth a commit.
// It compares the set of changed directories, so a file written again and
// again in one directory looks still; most bounds how long that can go on.
type settler struct {
	quiet, most    time.Duration
	seen           string    // the changed directories, as last seen
	first, changed time.Time // when changes were first seen, and last grew
}

// due reads one answer at now and reports whether to commit. When PID 1
// cannot tell what changed (just started, too many changes), changes are
// presumed and committed every most.
func (s *settler) due(now time.Time, d *protocol.WatchDirty) bool {
	seen := "\x00unknown"
	if d.Valid {
		if len(d.Dirs) == 0 {
			s.seen, s.first = "", time.Time{}
			return false
		}
		dirs := slices.Clone(d.Dirs)
		slices.Sort(dirs)
		seen = strings.Join(dirs, "\x00")
	}
	if s.first.IsZero() {
		s.first, s.changed, s.seen = now, now, seen
	}
	if seen != s.seen {
		s.seen, s.changed = seen, now
	}
	if !d.Valid {
		return now.Sub(s.first) >= s.most
	}
	return now.Sub(s.changed) >= s.quiet || now.Sub(s.first) >= s.most
}
