package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
)

// transferOptions are what upload or download was asked.
type transferOptions struct{ Name, Src, Dest string }

func newUploadCommand(p *cli.Program) *cobra.Command {
	return &cobra.Command{
		Use:   "upload NAME SRC DEST",
		Short: "Copy a host file or directory into a sandbox at DEST, and commit it",
		Long: `Copy a host file or directory into a sandbox. DEST is the exact path it gets
(relative paths are under /src); a directory's contents merge into DEST.
Modes are kept, and the change is committed like the agent's write.`,
		Example:           "  litterbox upload fix-login ./fixtures tests/fixtures\n  litterbox upload fix-login ./run.sh scripts/run.sh",
		Args:              cobra.ExactArgs(3),
		ValidArgsFunction: p.NameThenHostPath(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUpload(cmd.Context(), p.Env, transferOptions{Name: args[0], Src: args[1], Dest: args[2]})
		},
	}
}

// runUpload copies o.Src from the host into the sandbox and commits it.
func runUpload(ctx context.Context, e *cli.Env, o transferOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	sb, err := m.Open(o.Name)
	if err != nil {
		return err
	}
	res, err := sb.Upload(ctx, o.Src, o.Dest)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "Uploaded %s to %s.\n", o.Src, o.Dest)
	reportSnapshot(e, m, o.Name, res)
	return nil
}
