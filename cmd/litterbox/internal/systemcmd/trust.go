package systemcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/config"
)

// trustOptions are what trust was asked.
type trustOptions struct {
	Revoke bool
}

func NewTrustCommand(p *cli.Program) *cobra.Command {
	var o trustOptions
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Allow what this repository's committed .litterbox.toml loosens (network, root, ports, limits)",
		Long: `A committed .litterbox.toml comes with the repository: someone else's, or an
agent's branch you merged. Settings in it that loosen a sandbox (any network
but "none", uid 0, read-only = false, limits above the defaults, ports) are
refused until you allow the file as it is now with litterbox trust; a changed
file needs it again. A committed [docker] build (or devcontainer.json build)
is trusted with the Dockerfile and .dockerignore that HEAD holds: the image is
built from the sandbox's base commit only, and a create whose Dockerfile differs
from the trusted one is refused until you review it and run litterbox trust. The same settings in .litterbox.local.toml or your own
config (~/.config/litterbox/config.toml) need no trust. network = "host" is
taken only from the command line (litterbox create NAME --network host).
The trust is kept in the repository's git dir, per work tree.`,
		Example: "  litterbox trust\n  litterbox trust --revoke",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTrust(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.Revoke, "revoke", false, "withdraw the trust")
	return cmd
}

// runTrust records (or with Revoke withdraws) the trust in the committed
// config as it is now.
func runTrust(ctx context.Context, e *cli.Env, o trustOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	if o.Revoke {
		if err := m.Repo.Untrust(); err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "%s is no longer trusted.\n", config.File)
		return nil
	}
	res, err := m.Trust()
	if err != nil {
		return err
	}
	what := "it loosens nothing"
	if len(res.Weakenings) > 0 {
		what = "it sets " + strings.Join(res.Weakenings, ", ")
	}
	if res.Build != "" {
		what += "; and its image build from " + res.Build
	}
	fmt.Fprintf(e.Stdout, "Trusted %s (%s): %s.\n", res.File, res.Digest[:19], what)
	return nil
}
