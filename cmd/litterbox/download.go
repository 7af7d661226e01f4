package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
)

func newDownloadCommand(p *cli.Program) *cobra.Command {
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
		ValidArgsFunction: p.NameThenHostPath(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDownload(cmd.Context(), p.Env, transferOptions{Name: args[0], Src: args[1], Dest: args[2]})
		},
	}
}

// runDownload copies o.Src out of the sandbox to o.Dest on the host.
func runDownload(ctx context.Context, e *cli.Env, o transferOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	sb, err := m.Open(o.Name)
	if err != nil {
		return err
	}
	n, err := sb.Download(ctx, o.Src, o.Dest)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "Downloaded %s to %s (%d entries).\n", o.Src, o.Dest, n)
	return nil
}
