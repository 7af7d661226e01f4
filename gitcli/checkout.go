package gitcli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/litterbox-dev/litterbox/runner"
)

// CheckoutTar is the tree-ish rev (an object id, maybe with a :path: dir
// has no refs) as a tar stream of what `git checkout`
// writes: every file of the tree, through the smudge filters and line
// endings its attributes give it. `git archive` alone writes something
// else: it leaves out the paths an attribute marks export-ignore and
// rewrites those marked export-subst, so a sandbox made from its stream
// would miss files its branch holds. Here git archive runs in dir, a git
// dir of Litterbox's own (ArchiveDir) that reads the repository's objects
// and config and whose info/attributes, which outrank every other
// attributes file, unset both.
//
// With yours, the attributes are those of the client's work tree (the
// user's own files, as `apply` pins them) and none of rev's: an agent's
// tree then picks no filter of the user's to run on this machine. Without
// it they are rev's own, as a checkout of rev reads them.
func (c *Client) CheckoutTar(ctx context.Context, dir, rev string, yours bool, w io.Writer) error {
	args := append(withoutLocation(c.Global), "--git-dir="+dir)
	if yours {
		args = append(args, "--work-tree=.")
	}
	args = append(args, "-c", "tar.umask=0022", "archive", "--format=tar")
	if yours {
		args = append(args, "--worktree-attributes")
	}
	_, err := c.Runner.Run(ctx, runner.Cmd{Name: c.Bin, Args: append(append([]string{"-C", c.Dir}, args...), "--end-of-options", rev), Stdout: w})
	return err
}

// withoutLocation is global without the options that name a git dir or a
// work tree: CheckoutTar names its own.
func withoutLocation(global []string) []string {
	var out []string
	for _, g := range global {
		if !strings.HasPrefix(g, "--git-dir=") && !strings.HasPrefix(g, "--work-tree=") {
			out = append(out, g)
		}
	}
	return out
}

// archiveAttributes neutralise what only `git archive` reads.
const archiveAttributes = "* -export-ignore -export-subst\n"

// ArchiveDir makes dir, a new directory, a git dir for CheckoutTar over
// the repository whose common git dir is gitDir: its objects through
// alternates, its config through an include (the user's filters, LFS
// settings and line endings), its LFS objects, no refs of its own, and
// the info/attributes that unset export-ignore and export-subst. It is a
// handful of small files, made for one copy: the caller removes it after.
func ArchiveDir(gitDir, dir string) error {
	common, err := filepath.Abs(gitDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"HEAD":                    "ref: refs/heads/litterbox-archive\n",
		"config":                  archiveConfig(common),
		"objects/info/alternates": filepath.Join(common, "objects") + "\n",
		"info/attributes":         archiveAttributes,
		"refs/.keep":              "",
		"objects/pack/.keep":      "",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// archiveConfig reads the repository's config, after LFS's storage is set
// to the repository's own (git-lfs would otherwise keep the objects it
// fetches in dir), so a storage the user set still wins.
func archiveConfig(common string) string {
	return "[lfs]\n\tstorage = " + quoteConfig(filepath.Join(common, "lfs")) + "\n" +
		"[include]\n\tpath = " + quoteConfig(filepath.Join(common, "config")) + "\n"
}

// quoteConfig quotes a value for a git config file: backslashes and
// double quotes escaped, the whole in double quotes.
func quoteConfig(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
