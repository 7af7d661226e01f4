package create

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/pool"
	"github.com/litterbox-dev/litterbox/internal/result"
)

// LabelLimits keeps a sandbox's limits on its container (JSON of Limits),
// so the memory budget is summed from one listing of the engine, across
// repositories.
const LabelLimits = "dev.litterbox.limits"

// Limits are what bound one sandbox and its repository's sandboxes on the
// host, as create settled them.
type Limits struct {
	CPUs   string `json:"cpus"`
	Memory string `json:"memory"`
	Pids   int    `json:"pids"`
	// Idle is how long a sandbox may do nothing before it stops; "" for
	// never.
	Idle string `json:"idle,omitempty"`
	// MemoryBudget is what the memory limits of the repository's running
	// sandboxes may add up to, in bytes (0: not known, as on a cluster),
	// and MemoryInUse what they add up to with this one.
	MemoryBudget int64 `json:"memory_budget,omitempty"`
	MemoryInUse  int64 `json:"memory_in_use,omitempty"`
	// Sandboxes counts this repository's sandboxes with this one, of
	// MaxSandboxes that agents may create.
	Sandboxes    int `json:"sandboxes,omitempty"`
	MaxSandboxes int `json:"max_sandboxes,omitempty"`
}

// label is what the container's LabelLimits keeps: the sandbox's own.
func (l Limits) label() string {
	data, _ := json.Marshal(Limits{CPUs: l.CPUs, Memory: l.Memory, Pids: l.Pids, Idle: l.Idle})
	return string(data)
}

func limitsOf(cfg config.Config) Limits {
	l := Limits{CPUs: cfg.CPUs, Memory: cfg.Memory, Pids: cfg.PidsLimit, MaxSandboxes: cfg.MaxSandboxes}
	if cfg.Idle > 0 {
		l.Idle = cfg.Idle.String()
	}
	return l
}

// LimitError is a create refused by a limit: the repository's count of
// sandboxes, or the engine's memory budget.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// checkLimits refuses a create past the repository's count of sandboxes
// (unless a person passed over it) or past the engine's memory budget, and
// settles the limits create reports.
func (c *creation) checkLimits(ctx context.Context) error {
	m, cfg := c.m, c.cfg
	c.limits = limitsOf(cfg)
	recs := m.Repo.Store().All()
	delete(recs, c.slug)
	c.limits.Sandboxes = len(recs) + 1
	if len(recs) >= cfg.MaxSandboxes && !c.opts.OverLimit {
		names := slices.Sorted(maps.Keys(recs))
		return &LimitError{Msg: fmt.Sprintf("sandbox limit: this repository has %d sandboxes (%s), as many as [limits] sandboxes = %d allows; delete one (litterbox delete NAME), or raise the limit in %s; a person may pass it with create --over-limit",
			len(recs), shortList(names, 8), cfg.MaxSandboxes, config.LocalFile)}
	}
	return c.checkMemory(ctx)
}

// checkMemory refuses a sandbox whose memory limit would take the
// repository's running sandboxes past their budget (ownRunning).
func (c *creation) checkMemory(ctx context.Context) error {
	m, cfg := c.m, c.cfg
	info, ok := m.Repo.Provider.(box.HostInfo)
	if !ok {
		return nil
	}
	pct, size, err := config.ParseBudget(cfg.MemoryBudget)
	if err != nil {
		return err
	}
	facts := c.facts
	if facts == nil {
		facts = readBudget(ctx, m.Repo.Provider, info)
	}
	<-facts.done
	total, err := facts.total, facts.totalErr
	if err != nil {
		return fmt.Errorf("reading the engine host's memory for the memory budget: %w", err)
	}
	budget := size
	if pct > 0 {
		budget = int64(float64(total) * pct / 100)
	}
	if cfg.From["docker.memory"] == "" {
		// The default is a share of the budget: MaxSandboxes of them fit.
		share := budget / int64(cfg.MaxSandboxes) >> 20 << 20
		if share < int64(config.MemBytes(cfg.Memory)) {
			c.cfg.Memory = strconv.FormatInt(share>>20, 10) + "m"
			cfg.Memory, c.limits.Memory = c.cfg.Memory, c.cfg.Memory
		}
	}
	list, err := facts.list, facts.listErr
	if err != nil {
		return err
	}
	c.boxes = orEmpty(list) // read, though it may be empty
	own := int64(config.MemBytes(cfg.Memory))
	used, users := own, []string(nil)
	for _, s := range ownRunning(list, m.Repo.Prefix(), c.n.Container) {
		n := memoryOf(s.Labels)
		used += n
		// By name, from the container's: a claimed pool entry has the
		// entry's labels.
		users = append(users, fmt.Sprintf("%s (%s)", strings.TrimPrefix(s.Name, m.Repo.Prefix()+"-"), result.HumanSize(n)))
	}
	slices.Sort(users)
	c.limits.MemoryBudget, c.limits.MemoryInUse = budget, used
	if used <= budget {
		return nil
	}
	return &LimitError{Msg: fmt.Sprintf("memory budget: this sandbox's %s would bring this repository's running sandboxes to %s, over their budget of %s ([limits] memory-budget = %q of the host's %s); they are: %s; delete one (litterbox delete NAME), lower [docker] memory, or raise the budget in %s",
		result.HumanSize(own), result.HumanSize(used), result.HumanSize(budget), cfg.MemoryBudget, result.HumanSize(total), orNone(shortList(users, 6)), config.LocalFile)}
}

// ownRunning are the sandboxes the memory budget counts: this
// repository's (their names start with prefix) that run or are paused,
// but the one being made. A memory limit is what a sandbox may take, not
// what it uses, and the engine does not say what each uses without a
// sample of seconds (docker stats), so the budget counts one
// repository's limits: another repository's sandboxes, and other
// people's, never refuse a create here. Warm pool entries are not
// counted: they run nothing until a create claims one, which then counts
// as this sandbox.
func ownRunning(list []box.Summary, prefix, self string) []box.Summary {
	var out []box.Summary
	for _, s := range list {
		if s.State != "running" && s.State != "paused" || s.Name == self || pool.IsEntry(s.Name) || !strings.HasPrefix(s.Name, prefix+"-") {
			continue
		}
		out = append(out, s)
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// budgetFacts are what the memory budget reads of the engine: its host's
// memory and its sandboxes, read beside the image's checks (they need
// nothing of them), ready once done is closed.
type budgetFacts struct {
	done     chan struct{}
	total    int64
	totalErr error
	list     []box.Summary
	listErr  error
}

// readBudget starts reading the budget's facts, both at once.
func readBudget(ctx context.Context, p box.Provider, info box.HostInfo) *budgetFacts {
	f := &budgetFacts{done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		f.total, f.totalErr = info.HostMemory(ctx)
	}()
	go func() {
		defer wg.Done()
		f.list, f.listErr = p.List(ctx, map[string]string{hostrepo.LabelManaged: "true"}, append([]string{hostrepo.LabelSandbox, hostrepo.LabelRepoSlug, LabelLimits}, pool.Labels...))
	}()
	go func() { wg.Wait(); close(f.done) }()
	return f
}

// memoryOf is a sandbox container's memory limit, by its label; a sandbox
// of an older release, which has none, counts the default.
func memoryOf(labels map[string]string) int64 {
	if l := ParseLimits(labels); l != nil {
		if n := config.MemBytes(l.Memory); n > 0 {
			return int64(n)
		}
	}
	return int64(config.MemBytes(config.Default().Memory))
}

// shortList joins the first max items, and says how many more there are.
func shortList(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(" and %d more", len(items)-max)
}

// ParseLimits reads a container's LabelLimits; nil without one.
func ParseLimits(labels map[string]string) *Limits {
	var l Limits
	if json.Unmarshal([]byte(labels[LabelLimits]), &l) != nil {
		return nil
	}
	return &l
}
