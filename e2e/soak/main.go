// Command soak loads Litterbox the way several agents at once would: it starts
// several `litterbox mcp` servers on one repository, creates sandboxes, and for
// a bounded time has workers on every server issue mixed tool calls (write,
// edit, bash, read, ls, grep, glob) on random sandboxes concurrently. Then it
// checks that no commit was lost or duplicated (each changing call made
// exactly one commit and the branches hold exactly what was written), that no
// process or container leaked, and that each server's memory stayed flat.
//
// Usage:
//
//	soak --bin LITTERBOX --repo DIR [--servers 2] [--sandboxes 8] [--workers 3] [--duration 60s]
//
// It prints a summary and exits 1 if any check failed.
package main

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/mcpproc"
	"github.com/litterbox-dev/litterbox/runner"
)

type server struct {
	id   int
	proc *mcpproc.Server
	c    *client.Client
	rss  []int64 // one sample a second
}

// expectation is what one sandbox's branch must hold at the end.
type expectation struct {
	mu       sync.Mutex
	files    map[string]string // path -> content
	changing int               // calls that changed a file, each one commit
}

type tally struct {
	mu    sync.Mutex
	calls map[string]int
	fails []string
}

func (t *tally) add(tool string) {
	t.mu.Lock()
	t.calls[tool]++
	t.mu.Unlock()
}

func (t *tally) fail(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.fails) < 50 {
		t.fails = append(t.fails, fmt.Sprintf(format, args...))
	}
}

func main() { os.Exit(run()) }

func run() int {
	bin := flag.String("bin", os.Getenv("LITTERBOX"), "litterbox binary")
	repo := flag.String("repo", "", "repository")
	nServers := flag.Int("servers", 2, "litterbox mcp processes")
	nSandboxes := flag.Int("sandboxes", 8, "sandboxes")
	nWorkers := flag.Int("workers", 3, "concurrent callers per server")
	duration := flag.Duration("duration", 60*time.Second, "how long to load")
	flag.Parse()
	if *bin == "" || *repo == "" {
		fmt.Fprintln(os.Stderr, "usage: soak --bin LITTERBOX --repo DIR [--servers N] [--sandboxes N] [--workers N] [--duration D]")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration+5*time.Minute)
	defer cancel()
	t := &tally{calls: map[string]int{}}

	var servers []*server
	defer func() {
		for _, s := range servers {
			s.proc.Kill()
		}
	}()
	for i := range *nServers {
		// Each server acts on every sandbox, as one orchestrating agent would.
		p, err := mcpproc.Start(*bin, []string{"mcp", "--repo", *repo, "--all-sandboxes"}, os.Stderr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: starting server %d: %v\n", i, err)
			return 1
		}
		servers = append(servers, &server{id: i, proc: p})
		c, err := mcpproc.Connect(ctx, p, "soak")
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: initialize server %d: %v\n", i, err)
			return 1
		}
		servers[i].c = c
	}

	names := make([]string, *nSandboxes)
	expect := make([]*expectation, *nSandboxes)
	for i := range names {
		names[i] = fmt.Sprintf("soak-%d", i)
		expect[i] = &expectation{files: map[string]string{}}
		res, err := call(ctx, servers[i%len(servers)], "sandbox-create", map[string]any{"name": names[i]})
		if err != nil || res.IsError {
			fmt.Fprintf(os.Stderr, "soak: creating %s: %v %s\n", names[i], err, text(res))
			return 1
		}
	}

	// Memory, a sample a second per server, from /proc.
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
				for _, s := range servers {
					if r, err := s.proc.RSS(); err == nil {
						s.rss = append(s.rss, r)
					}
				}
			}
		}
	}()

	deadline := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for _, s := range servers {
		for w := range *nWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				worker(ctx, s, w, names, expect, deadline, t)
			}()
		}
	}
	wg.Wait()
	close(stopSampling)
	sampling.Wait()

	for _, s := range servers {
		_ = s.c.Close()
		if err := s.proc.Stop(10 * time.Second); err != nil {
			t.fail("server %d did not exit cleanly: %v", s.id, err)
		}
	}
	stopped := servers
	servers = nil // stopped: nothing left to kill

	verify(ctx, *repo, names, expect, t)
	ok := report(t, stopped, names, expect)
	return map[bool]int{true: 0, false: 1}[ok]
}

// worker issues random calls until the deadline. Each worker writes only its
// own files, so what each sandbox must hold at the end is known exactly.
func worker(ctx context.Context, s *server, w int, names []string, expect []*expectation, deadline time.Time, t *tally) {
	mine := map[int][]string{} // sandbox -> files this worker wrote
	n := 0
	for time.Now().Before(deadline) {
		n++
		i := rand.IntN(len(names))
		sb, e := names[i], expect[i]
		tok := token()
		own := fmt.Sprintf("s%d-w%d", s.id, w)
		switch op := rand.IntN(10); {
		case op < 3:
			p := fmt.Sprintf("soak/%s-%d.txt", own, n)
			if changed(ctx, s, t, "write", map[string]any{"sandbox": sb, "path": p, "content": tok + "\n"}) {
				e.record(p, tok+"\n")
				mine[i] = append(mine[i], p)
			}
		case op < 5:
			p := fmt.Sprintf("soak/%s.out", own)
			if changed(ctx, s, t, "bash", map[string]any{"sandbox": sb, "command": "mkdir -p soak && echo " + tok + " >> " + p}) {
				e.appendTo(p, tok+"\n")
			}
		case op < 6 && len(mine[i]) > 0:
			p := mine[i][rand.IntN(len(mine[i]))]
			old := e.get(p)
			if changed(ctx, s, t, "edit", map[string]any{"sandbox": sb, "path": p, "old_string": old, "new_string": tok + "\n"}) {
				e.record(p, tok+"\n")
			}
		case op < 8 && len(mine[i]) > 0:
			p := mine[i][rand.IntN(len(mine[i]))]
			res, err := call(ctx, s, "read", map[string]any{"sandbox": sb, "path": p})
			t.add("read")
			if err != nil || res.IsError {
				t.fail("read %s %s: %v %s", sb, p, err, text(res))
			} else if got := field(res, "content"); got != e.get(p) {
				t.fail("read %s %s: %q, want %q", sb, p, got, e.get(p))
			}
		default:
			tool := []string{"ls", "grep", "glob", "bash"}[rand.IntN(4)]
			args := map[string]any{"sandbox": sb}
			switch tool {
			case "ls":
				args["path"] = "/src"
			case "grep":
				args["pattern"] = "[0-9a-f]{16}"
			case "glob":
				args["pattern"] = "**/*.txt"
			case "bash":
				args["command"] = "true"
			}
			res, err := call(ctx, s, tool, args)
			t.add(tool)
			if err != nil || res.IsError {
				t.fail("%s %s: %v %s", tool, sb, err, text(res))
			} else if tool == "bash" && snapshot(res) != "" {
				t.fail("a no-op bash on %s made commit %s", sb, snapshot(res))
			}
		}
	}
}

// changed makes a call that must change a file, so it must return a snapshot.
func changed(ctx context.Context, s *server, t *tally, tool string, args map[string]any) bool {
	res, err := call(ctx, s, tool, args)
	t.add(tool)
	if err != nil || res.IsError {
		t.fail("%s %v: %v %s", tool, args["sandbox"], err, text(res))
		return false
	}
	if code, ok := res.StructuredContent.(map[string]any)["exit_code"].(float64); ok && code != 0 {
		t.fail("%s on %v exited %v: %s", tool, args["sandbox"], code, text(res))
		return false
	}
	if snapshot(res) == "" {
		t.fail("%s on %v changed a file but made no commit", tool, args["sandbox"])
		return false
	}
	return true
}

func (e *expectation) record(p, content string) {
	e.mu.Lock()
	e.files[p] = content
	e.changing++
	e.mu.Unlock()
}

func (e *expectation) appendTo(p, line string) {
	e.mu.Lock()
	e.files[p] += line
	e.changing++
	e.mu.Unlock()
}

func (e *expectation) get(p string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.files[p]
}

// verify compares every branch with what was written, and looks for leaks.
func verify(ctx context.Context, repo string, names []string, expect []*expectation, t *tally) {
	log := logrus.New()
	log.SetOutput(os.Stderr)
	log.SetLevel(logrus.WarnLevel)
	r := runner.NewExec(log)
	out := func(name string, args ...string) (string, error) {
		res, err := r.Run(ctx, runner.Cmd{Name: name, Args: args, Dir: repo})
		return strings.TrimSpace(string(res.Stdout)), err
	}
	var containers []string
	for i, sb := range names {
		e := expect[i]
		branch := "litterbox/" + sb
		base, err := out("docker", "inspect", "--format", `{{index .Config.Labels "dev.litterbox.base"}}`, containerOf(repo, sb))
		if err != nil {
			t.fail("inspect %s: %v", sb, err)
			continue
		}
		containers = append(containers, containerOf(repo, sb))
		// Plus the setup command's commit, when it changed anything (it
		// does not here).
		if n, err := out("git", "rev-list", "--count", base+".."+branch); err != nil || n != fmt.Sprint(e.changing) {
			t.fail("%s: %s commits on the branch, %d changing calls (%v)", sb, n, e.changing, err)
		}
		for p, want := range e.files {
			if got, err := out("git", "show", branch+":"+p); err != nil || got+"\n" != want {
				t.fail("%s: %s on the branch is %q, want %q (%v)", sb, p, got, want, err)
			}
		}
		// Inside, only PID 1 (the helper's init) may run besides this check. A
		// process the last call killed may still await PID 1's reaping (a
		// zombie, "[sh]") for a moment: a leak is what is still there after
		// three seconds.
		var left string
		for try := 0; try < 30; try++ {
			left, err = out("docker", "exec", containerOf(repo, sb), "sh", "-c",
				"ps -o args | grep -v -e '^COMMAND' -e '^/.litterbox/[0-9a-f]*/litterbox-helper init' -e 'ps -o args' -e 'grep -v'")
			if left == "" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if left != "" {
			t.fail("%s: processes left inside: %q (%v)", sb, left, err)
		}
	}
	if ids, err := out("docker", "ps", "-a", "-q", "--filter", "label=dev.litterbox.repo="+repo); err != nil || len(strings.Fields(ids)) != len(names) {
		t.fail("%d containers for the repository, want %d (%v)", len(strings.Fields(ids)), len(names), err)
	}
	// No docker client of ours is still running on the host.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(data), "\x00", " ")
		for _, c := range containers {
			if strings.Contains(cmd, c) && !strings.Contains(cmd, "soak") {
				t.fail("leaked host process: %s", cmd)
			}
		}
	}
}

// containerOf reads the sandbox's container name from its record, where
// Litterbox keeps it.
func containerOf(repo, sb string) string {
	var rec struct {
		Container string `json:"container"`
	}
	data, _ := os.ReadFile(filepath.Join(repo, ".git", "litterbox", "sandboxes", sb+".json"))
	_ = json.Unmarshal(data, &rec)
	return rec.Container
}

// report prints the summary; memory is flat when the last quarter's median
// RSS is within 20% (and 8 MiB) of the second quarter's.
func report(t *tally, servers []*server, names []string, expect []*expectation) bool {
	tools := make([]string, 0, len(t.calls))
	total := 0
	for k, v := range t.calls {
		tools = append(tools, k)
		total += v
	}
	sort.Strings(tools)
	fmt.Printf("calls: %d (", total)
	for i, k := range tools {
		if i > 0 {
			fmt.Print(", ")
		}
		fmt.Printf("%s %d", k, t.calls[k])
	}
	fmt.Println(")")
	commits := 0
	for i := range names {
		commits += expect[i].changing
	}
	fmt.Printf("commits checked: %d across %d sandboxes\n", commits, len(names))
	for _, s := range servers {
		q := len(s.rss) / 4
		if q == 0 {
			t.fail("server %d: too few memory samples", s.id)
			continue
		}
		early, late := median(s.rss[q:2*q]), median(s.rss[3*q:])
		fmt.Printf("server %d RSS: %.1f MiB after warm-up, %.1f MiB at the end, peak %.1f MiB\n", s.id, mib(early), mib(late), mib(slices.Max(s.rss)))
		if late > early+early/5 && late-early > 8<<20 {
			t.fail("server %d memory grew from %.1f to %.1f MiB", s.id, mib(early), mib(late))
		}
	}
	if len(t.fails) > 0 {
		fmt.Println("FAILED:")
		for _, f := range t.fails {
			fmt.Println("  " + f)
		}
		return false
	}
	fmt.Println("ok: no commit lost or duplicated, no leak, memory flat")
	return true
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func call(ctx context.Context, s *server, tool string, args map[string]any) (*gomcp.CallToolResult, error) {
	req := gomcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	return s.c.CallTool(ctx, req)
}

func text(res *gomcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := gomcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, " ")
}

func field(res *gomcp.CallToolResult, k string) string {
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		return ""
	}
	v, _ := m[k].(string)
	return v
}

func snapshot(res *gomcp.CallToolResult) string { return field(res, "snapshot") }

func token() string {
	b := make([]byte, 8)
	if _, err := crand.Read(b); err != nil {
		panic(errors.New("no randomness"))
	}
	return hex.EncodeToString(b)
}
