package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// dashArgs splits "NAME -- extra..." into the name and the extra arguments.
func dashArgs(cmd *cobra.Command, args []string) (string, []string, error) {
	at := cmd.ArgsLenAtDash()
	if at == -1 {
		if len(args) != 1 {
			return "", nil, usagef("%s takes one sandbox NAME (put extra git arguments after --)", cmd.Name())
		}
		return args[0], nil, nil
	}
	if at != 1 {
		return "", nil, usagef("%s takes one sandbox NAME before --", cmd.Name())
	}
	return args[0], args[1:], nil
}

// diffOptions are what diff was asked: a sandbox, and git diff's own
// arguments after --.
type diffOptions struct {
	Name  string
	Extra []string
}

func (a *app) diffCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "diff NAME [-- GIT-DIFF-ARGS...]",
		Short: "Show the sandbox's changes since its base (base..litterbox/NAME)",
		Example: `  litterbox diff fix-login
  litterbox diff fix-login -- --stat
  litterbox diff fix-login -- src/`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, extra, err := dashArgs(cmd, args)
			if err != nil {
				return err
			}
			return a.runDiff(cmd.Context(), diffOptions{Name: name, Extra: extra})
		},
	}
}

// runDiff prints base..litterbox/NAME, after a warning about files that
// steer this machine.
func (a *app) runDiff(ctx context.Context, o diffOptions) error {
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	a.warnControl(ctx, m, o.Name)
	return m.Diff(ctx, o.Name, o.Extra, a.stdout, a.stderr)
}

// logOptions are what log was asked: a sandbox's commits (git log's own
// arguments after --), or with Audit the agents' tool calls.
type logOptions struct {
	Name               string
	Extra              []string
	Patch, Audit, JSON bool
}

func (a *app) logCommand() *cobra.Command {
	var o logOptions
	cmd := &cobra.Command{
		Use:   "log NAME [-p] [-- GIT-LOG-ARGS...] | log --audit [NAME]",
		Short: "Show the sandbox's commits since its base, or (--audit) the agents' tool calls",
		Long: `Show the sandbox's commits since its base (git log base..litterbox/NAME).

With --audit, show the audit log instead: every MCP tool call an agent made on
this repository (of one sandbox, when NAME is given), with its arguments (file
contents as their size and SHA-256), its result, how long it took, and every
docker and git command it caused, as pasteable lines. The log is JSON lines in
$(git rev-parse --git-common-dir)/litterbox/audit.jsonl; --json prints them.`,
		Example:           "  litterbox log fix-login\n  litterbox log fix-login -p\n  litterbox log fix-login -- --oneline\n  litterbox log --audit fix-login",
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.Audit && len(args) > 1:
				return usagef("log --audit takes at most one sandbox name")
			case o.Audit && len(args) == 1:
				o.Name = args[0]
			case o.Audit:
			case len(args) == 0:
				return usagef("log: name the sandbox (or use --audit)")
			default:
				var err error
				if o.Name, o.Extra, err = dashArgs(cmd, args); err != nil {
					return err
				}
			}
			return a.runLog(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.Patch, "patch", "p", false, "show each commit's diff")
	cmd.Flags().BoolVar(&o.Audit, "audit", false, "show the audit log of MCP tool calls instead")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "with --audit: print the entries as JSON lines")
	return cmd
}

// runLog prints the sandbox's commits since its base, or the audit log.
func (a *app) runLog(ctx context.Context, o logOptions) error {
	if o.Audit {
		return a.printAudit(ctx, o.Name, o.JSON)
	}
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	a.warnControl(ctx, m, o.Name)
	return m.Log(ctx, o.Name, o.Patch, o.Extra, a.stdout, a.stderr)
}

func (a *app) printAudit(ctx context.Context, name string, asJSON bool) error {
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	entries, err := m.ReadAudit(name)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.stderr, "No tool calls in the audit log.")
		return nil
	}
	for _, e := range entries {
		if asJSON {
			line, err := json.Marshal(e)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, string(line))
			continue
		}
		// What an agent typed is shown with its controls escaped.
		args, _ := json.Marshal(e.Arguments)
		fmt.Fprintf(a.stdout, "%s  %-17s %-5s %5dms  %s\n", e.Time.Local().Format("2006-01-02 15:04:05"), agenttext.Inert(e.Tool), agenttext.Inert(e.Status), e.DurationMS, agenttext.Inert(string(args)))
		if e.Error != "" {
			fmt.Fprintf(a.stdout, "    error: %s\n", agenttext.Inert(e.Error))
		}
		for _, host := range slices.Sorted(maps.Keys(e.Refused)) {
			fmt.Fprintf(a.stdout, "    refused by the egress proxy: %s (%dx)\n", agenttext.Inert(host), e.Refused[host])
		}
		for _, c := range e.Commands {
			logged := runner.Logged(c.Line, c.ExitCode, time.Duration(c.DurationMS)*time.Millisecond, c.Note)
			fmt.Fprintln(a.stdout, "    "+strings.ReplaceAll(agenttext.Inert(logged), "\n", "\n    "))
		}
	}
	return nil
}

// applyOptions are what apply or merge was asked.
type applyOptions struct {
	Name               string
	Extra              []string // git cherry-pick's own arguments, after --
	Merge, Squash, Yes bool
}

func (a *app) applyCommand(merge bool) *cobra.Command {
	o := applyOptions{Merge: merge}
	use, short := "apply", "Bring the sandbox's new commits onto the current branch (git cherry-pick); the sandbox stays"
	example := "  litterbox apply fix-login\n  litterbox apply fix-login --squash\n  litterbox apply fix-login -- --signoff"
	if merge {
		use, short = "merge", "Apply the sandbox's commits, then delete the sandbox if that succeeded"
		example = "  litterbox merge fix-login\n  litterbox merge fix-login --squash"
	}
	cmd := &cobra.Command{
		Use:   use + " NAME [--squash] [-- GIT-CHERRY-PICK-ARGS...]",
		Short: short,
		Long: short + `.

The reviewed commits are picked as git objects (git cherry-pick), keeping
their authorship and messages; a message is never read as a patch. Only the
commits since the last apply of this sandbox are taken, so apply, more work,
apply again (or merge) brings each change once; an apply with nothing new
says so and changes nothing. What was applied is recorded in the ref
refs/litterbox/NAME/applied; after undoing an apply on your side, delete that
ref (git update-ref -d) to take everything again. With --squash the
combined change is staged instead, for you to commit. Arguments after -- go
to git cherry-pick (--signoff, -x; not --no-commit, which is --squash).

No git hook runs during apply or merge (core.hooksPath=/dev/null), so
nothing the branch brings runs on this machine. Your identity and other git
config apply as usual. Afterwards the change made to your branch (or index)
is checked to be exactly the reviewed change; if it is not, it is undone.
Staged changes, or uncommitted changes on files the sandbox changed, are
refused first. On a conflict the repository is left in git's usual
cherry-pick state with instructions, and the sandbox is untouched.`,
		Example:           example,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Name, o.Extra, err = dashArgs(cmd, args); err != nil {
				return err
			}
			return a.runApply(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Squash, "squash", false, "stage the combined change instead of making commits")
	if merge {
		cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "merge a branch that changes files steering sandboxes or tools on this machine without asking")
	}
	return cmd
}

// runApply brings the sandbox's checked commits onto the current branch
// (and with Merge deletes the sandbox after), asking first on a terminal
// when they change files that steer this machine.
func (a *app) runApply(ctx context.Context, o applyOptions) error {
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	cs, tip, err := m.ControlChanges(ctx, o.Name)
	if err != nil {
		return err // fail closed: a merge must know what it brings
	}
	a.warnChanges(cs)
	if o.Merge && len(cs) > 0 && !o.Yes {
		if err := a.confirmMerge(o.Name, cs); err != nil {
			return err
		}
	}
	// Exactly the commits that were checked: the agent may commit more
	// while the user answers.
	ro := review.Options{Tip: tip, Squash: o.Squash, PickArgs: o.Extra, Stdout: a.stdout, Stderr: a.stderr}
	var applied *review.Applied
	var deleted *sandbox.Deleted
	if o.Merge {
		applied, deleted, err = m.Merge(ctx, o.Name, ro)
	} else {
		applied, err = m.Apply(ctx, o.Name, ro)
	}
	if applied != nil {
		if applied.NothingNew {
			fmt.Fprintf(a.stdout, "Nothing new in sandbox '%s' since it was applied at %s.\n", applied.Name, shortID(applied.Since))
		} else if applied.Squash {
			fmt.Fprintf(a.stdout, "Staged the combined change of %d commit(s) from sandbox '%s'; review it and commit.\n", applied.Commits, applied.Name)
		} else {
			fmt.Fprintf(a.stdout, "Applied %d commit(s) from sandbox '%s'.\n", applied.Commits, applied.Name)
		}
	}
	if deleted != nil && err == nil {
		fmt.Fprintf(a.stdout, "Deleted sandbox '%s' (its branch was at %s).\n", deleted.Name, deleted.BranchTip)
		a.printLeftAlone(deleted)
	}
	var conflict *review.ConflictError
	if errors.As(err, &conflict) && o.Merge {
		return fmt.Errorf("%w; the sandbox was not deleted", err)
	}
	return err
}

// warnControl tells the user, before anything else, which files the
// sandbox's branch changes that steer sandboxes or programs on this machine
// once merged. A sandbox that cannot be read is left to the command itself
// to report.
func (a *app) warnControl(ctx context.Context, m *sandbox.Manager, name string) {
	if cs, _, err := m.ControlChanges(ctx, name); err == nil {
		a.warnChanges(cs)
	}
}

func (a *app) warnChanges(cs []sandbox.ControlChange) {
	if len(cs) > 0 {
		fmt.Fprintf(a.stderr, "Warning: this branch changes files that steer sandboxes or programs on this machine; review them: %s\n", joinChanges(cs))
	}
}

func joinChanges(cs []sandbox.ControlChange) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// confirmMerge asks on a terminal; elsewhere a merge of such a branch needs
// --yes.
func (a *app) confirmMerge(name string, cs []sandbox.ControlChange) error {
	refusal := fmt.Errorf("not merged: sandbox '%s' changes %s; review them (litterbox diff %s), then: litterbox merge %s --yes", name, joinChanges(cs), name, name)
	if !isTerminal(a.stdin) || !isTerminal(a.stderr) {
		return refusal
	}
	fmt.Fprint(a.stderr, "Merge anyway? [y/N] ")
	answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return refusal
	}
	return nil
}

// transferOptions are what upload or download was asked.
type transferOptions struct{ Name, Src, Dest string }

func (a *app) uploadCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "upload NAME SRC DEST",
		Short: "Copy a host file or directory into a sandbox at DEST, and commit it",
		Long: `Copy a host file or directory into a sandbox. DEST is the exact path it gets
(relative paths are under /src); a directory's contents merge into DEST.
Modes are kept, and the change is committed like the agent's write.`,
		Example:           "  litterbox upload fix-login ./fixtures tests/fixtures\n  litterbox upload fix-login ./run.sh scripts/run.sh",
		Args:              cobra.ExactArgs(3),
		ValidArgsFunction: a.nameThenHostPath(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runUpload(cmd.Context(), transferOptions{Name: args[0], Src: args[1], Dest: args[2]})
		},
	}
}

// runUpload copies o.Src from the host into the sandbox and commits it.
func (a *app) runUpload(ctx context.Context, o transferOptions) error {
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	res, err := m.Upload(ctx, o.Name, o.Src, o.Dest)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Uploaded %s to %s.\n", o.Src, o.Dest)
	a.reportSnapshot(m, o.Name, res)
	return nil
}

func (a *app) downloadCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "download NAME SRC DEST",
		Short: "Copy a file or directory out of a sandbox to DEST on the host",
		Long: `Copy a file or directory out of a sandbox (SRC relative to /src) to the host.
DEST is the exact path it gets. Modes are kept; nothing is written outside
DEST, whatever the sandbox holds (symlinks are copied as links, never followed).
A download that would write into, or change the mode of, a symlink already
under DEST (one an earlier download left) is refused before anything is
written: remove the link, or download to a new DEST.`,
		Example:           "  litterbox download fix-login coverage.html ./coverage.html\n  litterbox download fix-login build ./build-out",
		Args:              cobra.ExactArgs(3),
		ValidArgsFunction: a.nameThenHostPath(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runDownload(cmd.Context(), transferOptions{Name: args[0], Src: args[1], Dest: args[2]})
		},
	}
}

// runDownload copies o.Src out of the sandbox to o.Dest on the host.
func (a *app) runDownload(ctx context.Context, o transferOptions) error {
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	n, err := m.Download(ctx, o.Name, o.Src, o.Dest)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Downloaded %s to %s (%d entries).\n", o.Src, o.Dest, n)
	return nil
}

// shortID abbreviates a commit id for a message.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
