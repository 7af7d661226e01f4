// Package layout is where Litterbox keeps its host-side state: one
// directory, .git/litterbox, in the repository's git dir (never in the
// work tree, so nothing of it is committed, and git worktrees of the
// repository each have their own). Every path under it is spelled here and
// nowhere else.
package layout

import "path/filepath"

// Layout is the state directory of one repository's git dir.
type Layout struct{ dir string }

// New is the layout under gitDir.
func New(gitDir string) Layout { return Layout{dir: filepath.Join(gitDir, "litterbox")} }

// Dir is the state directory itself.
func (l Layout) Dir() string { return l.dir }

// records is where each sandbox's record (<name>.json) lives.
func (l Layout) records() string { return filepath.Join(l.dir, "sandboxes") }

// Record is sandbox slug's record.
func (l Layout) Record(slug string) string { return filepath.Join(l.records(), slug+".json") }

// Snapshot is the state of slug's last snapshot: what the host knows of
// its /src.
func (l Layout) Snapshot(slug string) string { return filepath.Join(l.dir, "snap", slug+".json") }

// Index is where slug's private git index was kept, when snapshots
// committed from one (before fast-import): removed with the sandbox.
func (l Layout) Index(slug string) string { return filepath.Join(l.dir, "index", slug) }

// Ignore is slug's mirror of the .gitignore files of its /src.
func (l Layout) Ignore(slug string) string { return filepath.Join(l.dir, "ignore", slug) }

// Tmp holds transfers on their way in (uploads).
func (l Layout) Tmp() string { return filepath.Join(l.dir, "tmp") }

// TmpOf is slug's scratch space for snapshots.
func (l Layout) TmpOf(slug string) string { return filepath.Join(l.Tmp(), slug) }

// Lock is the lock file called name ("<slug>" for calls on a sandbox,
// "<slug>.services" for its services).
func (l Layout) Lock(name string) string { return filepath.Join(l.dir, "locks", name+".lock") }

// PoolLock is the lock the warm pool's claims ("claim") or fills
// ("fill") take turns on.
func (l Layout) PoolLock(which string) string { return filepath.Join(l.dir, "pool", which+".lock") }

// PoolError keeps the last warm pool fill's failure.
func (l Layout) PoolError() string { return filepath.Join(l.dir, "pool", "last-error") }

// Ahead caches how many commits slug's branch is ahead of its base.
func (l Layout) Ahead(slug string) string { return filepath.Join(l.dir, "ahead", slug) }

// Cache is the setup cache's directory of entries.
func (l Layout) Cache() string { return filepath.Join(l.dir, "cache") }

// CacheEntry is the setup cache entry keyed key.
func (l Layout) CacheEntry(key string) string { return filepath.Join(l.Cache(), key+".json") }

// Bases holds, per base tree a sandbox's /src is made over, the
// directory that says it is whole (internal/basetree).
func (l Layout) Bases() string { return filepath.Join(l.dir, "bases") }

// Trust records which committed configurations a human trusted.
func (l Layout) Trust() string { return filepath.Join(l.dir, "trust.json") }

// Session marks a sandbox's running `litterbox run` session (see
// HoldSession).
func (l Layout) Session(slug string) string { return filepath.Join(l.dir, "sessions", slug) }

// Audit is the log of every agent call.
func (l Layout) Audit() string { return filepath.Join(l.dir, "audit.jsonl") }

// Forecast is the forecast's cache of merges by commit ids
// (internal/forecast).
func (l Layout) Forecast() string { return filepath.Join(l.dir, "forecast.json") }

// Review is where sandbox slug's work stands in the review loop
// (internal/reviewstate).
func (l Layout) Review(slug string) string { return filepath.Join(l.dir, "review", slug+".json") }

// PerSandbox is every path of slug's state but its record, for delete.
// The locks are among them: removed while held, a waiter that still has
// one open locks a file nobody uses any more, which is harmless once the
// sandbox is gone.
func (l Layout) PerSandbox(slug string) []string {
	return []string{l.Snapshot(slug), l.Index(slug), l.Ignore(slug), l.TmpOf(slug), l.Lock(slug), l.Lock(slug + ".services"), l.Ahead(slug), l.Session(slug), l.Review(slug)}
}

// Identity is the repository's identity file, in the git dir common to
// all its worktrees, so every worktree is the same repository.
func Identity(commonDir string) string {
	return filepath.Join(commonDir, "litterbox", "repo-id.json")
}
