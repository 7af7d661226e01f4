package runner

import (
	"io"
	"os"
	"sync/atomic"
	"time"
)

// A process's output (to the caller's writers or Run's buffers) is fed by
// a pump of Run's own rather than by os/exec's copier. os/exec gives its copier WaitDelay after
// the process exits and then fails the whole command with "WaitDelay
// expired before I/O complete", even when the copier is only waiting for
// the caller to take data it is still processing (a snapshot's stream on a
// loaded machine). The pump tells the two apart: it waits as long as the
// caller's writer takes the data, and cuts the pipe off only when it has
// waited for the process's side for the grace with nothing arriving (a
// process the command left behind holds the pipe open).
type pump struct {
	r, w *os.File
	done chan struct{}
	// waiting is when the pump began its current wait on the pipe (Unix
	// nanoseconds), 0 while it hands data to the caller's writer.
	waiting atomic.Int64
	err     error // the caller's writer refused data
}

// startPump starts copying a new pipe's read end into dst; the process gets
// the write end.
func startPump(dst io.Writer) (*pump, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	p := &pump{r: r, w: w, done: make(chan struct{})}
	go p.run(dst)
	return p, w, nil
}

func (p *pump) run(dst io.Writer) {
	defer close(p.done)
	buf := make([]byte, 32<<10)
	for {
		p.waiting.Store(time.Now().UnixNano())
		n, err := p.r.Read(buf)
		p.waiting.Store(0)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				// As os/exec does: stop reading, so the process sees a
				// closed pipe, and report the writer's error.
				p.err = werr
				p.r.Close()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// finish waits, once the process has exited, for the pump to reach the end
// of its pipe, cutting it off after grace without data while it waits on
// the pipe. It returns the caller's writer's error, if any.
func (p *pump) finish(grace time.Duration) error {
	if grace <= 0 {
		grace = 2 * time.Second
	}
	t := time.NewTicker(grace / 4)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			p.r.Close()
			return p.err
		case now := <-t.C:
			if since := p.waiting.Load(); since != 0 && now.Sub(time.Unix(0, since)) >= grace {
				p.r.Close() // its Read returns, and the pump ends
			}
		}
	}
}

// closePumps ends pumps started for a process that never ran.
func closePumps(ps []*pump) {
	for _, p := range ps {
		p.w.Close()
		p.r.Close()
		<-p.done
	}
}
