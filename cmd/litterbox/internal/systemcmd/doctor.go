package systemcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/doctor"
)

// doctorOptions are what doctor was asked.
type doctorOptions struct {
	JSON bool
}

func NewDoctorCommand(p *cli.Program) *cobra.Command {
	var o doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that sandboxes can be made here: runtime, engine, image, git, repository, config, ports",
		Long: `Check everything a create needs, each with a fix when it fails: the runtime
CLI and its version, that the engine answers, that the image is present (or
can be pulled), git, the repository (and whether its work tree has uncommitted
changes, which sandboxes will not get), the config files, and free host ports
for [[ports]]. Exits 1 when any check fails. create runs the same checks and
stops at the first failure.`,
		Example: `  litterbox doctor
  litterbox doctor --runtime podman --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the checks as JSON")
	return cmd
}

// runDoctor runs every check and prints it with its fix; any failure is an
// error.
func runDoctor(ctx context.Context, e *cli.Env, o doctorOptions) error {
	checks := doctor.Run(ctx, e.Runner(false), e.Engine(), e.Location(e.RepoDir()))
	if o.JSON {
		if err := cli.WriteJSON(e.Stdout, checks); err != nil {
			return err
		}
	} else {
		var table strings.Builder
		tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
		for _, c := range checks {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, c.Detail)
			if c.Fix != "" && c.Status != box.CheckOK {
				fmt.Fprintf(tw, "\t\tfix: %s\n", c.Fix)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if _, err := io.WriteString(e.Stdout, e.PaintColumn(table.String(), 0, 0)); err != nil {
			return err
		}
	}
	if doctor.Failed(checks) {
		return errors.New("some checks failed; see the fixes above")
	}
	return nil
}
