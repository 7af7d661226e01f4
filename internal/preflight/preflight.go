// Package preflight is what create and doctor check of the engine
// before they rely on it: that it answers, that it has the image (pulled
// if need be), and what runs a sandbox under gVisor; and what to do when
// a sandbox's helper will not start.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
)

// Error is the first failed check, which stops a create; Err is the
// failure under it, for errors.Is.
type Error struct {
	Check box.Check
	Err   error
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	msg := e.Check.Name + ": " + e.Check.Detail
	if e.Check.Fix != "" {
		msg += " (" + e.Check.Fix + ")"
	}
	return msg
}

// pullTimeout bounds the image pull doctor and create may attempt.
const pullTimeout = 5 * time.Minute

// EngineCheck is the check of the engine behind cli, from what its
// versions call answered.
func EngineCheck(ctx context.Context, cli box.Provider, server string, err error) box.Check {
	if errors.Is(err, box.ErrBinaryMissing) {
		return box.Check{Name: "engine", Status: box.CheckFail, Detail: "the runtime CLI is not installed: " + OneLineErr(err),
			Fix: "install it, or choose another runtime with --runtime or LITTERBOX_RUNTIME"}
	}
	if err != nil || server == "" {
		where := ""
		if ep, eerr := cli.Endpoint(ctx); eerr == nil && ep != "" {
			where = " at " + ep
		}
		return box.Check{Name: "engine", Status: box.CheckFail, Detail: "not reachable" + where + ": " + OneLineErr(err),
			Fix: "start the engine (e.g. systemctl start docker), or point DOCKER_HOST / --context at a running one"}
	}
	return box.Check{Name: "engine", Status: box.CheckOK, Detail: "reachable, version " + server}
}

// PullCheck pulls an image that is not present. from is the config file
// that named it ("" for the default); a failure's fix names that file, and
// an image of this engine whose name is a near miss (a typo, the wrong
// case) as what was meant.
func PullCheck(ctx context.Context, cli box.Provider, bin, image, from string) box.Check {
	if from == "" {
		from = config.File
	}
	if lower := lowerRepository(image); lower != image {
		// The engine refuses the name before any registry sees it.
		return box.Check{Name: "image", Status: box.CheckFail, Detail: fmt.Sprintf("%q is not an image name: a repository's name is in lower case", image),
			Fix: fmt.Sprintf("set image = %q under [docker] in %s", orNear(ctx, cli, image, lower), from)}
	}
	pctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	if err := box.Images(cli).Pull(pctx, image); err != nil {
		fix := "pull or build it (" + bin + " pull " + image + "), or set another image under [docker] in " + from
		if near := nearImage(ctx, cli, image); near != "" {
			fix = fmt.Sprintf("did you mean %s, which this engine has? set image = %q under [docker] in %s", near, near, from)
		}
		return box.Check{Name: "image", Status: box.CheckFail, Detail: image + " is not present and could not be pulled: " + OneLineErr(err), Fix: fix}
	}
	return box.Check{Name: "image", Status: box.CheckOK, Detail: image + " pulled"}
}

// lowerRepository is image with its repository's name in lower case, as
// the engine requires (the tag keeps its case).
func lowerRepository(image string) string {
	name, rest := image, ""
	if i := strings.LastIndexAny(image, ":@"); i > strings.LastIndex(image, "/") {
		name, rest = image[:i], image[i:]
	}
	return strings.ToLower(name) + rest
}

// orNear is the engine's image nearest image if there is one, else def.
func orNear(ctx context.Context, cli box.Provider, image, def string) string {
	if near := nearImage(ctx, cli, image); near != "" {
		return near
	}
	return def
}

// nearImage is the image of this engine whose name is nearest image: the
// same but for case, or at most two edits away; "" when none is.
func nearImage(ctx context.Context, cli box.Provider, image string) string {
	l, ok := box.Images(cli).(box.ImageLister)
	if !ok {
		return ""
	}
	names, err := l.ImageNames(ctx)
	if err != nil {
		return ""
	}
	best, bestD := "", 3
	for _, n := range names {
		d := config.EditDistance(strings.ToLower(image), strings.ToLower(n))
		if strings.EqualFold(n, image) {
			d = 0
		}
		if d < bestD && n != image {
			best, bestD = n, d
		}
	}
	return best
}

// GVisorFlagsFix is what runsc needs where it cannot set up its own
// network (rootful Podman on a nested host): its flags, which only
// Podman passes from the config (Docker takes them from its daemon.json).
var GVisorFlagsFix = `runsc needs its flags on this host: set gvisor-flags = ["network=none", "host-uds=open"] under [docker] in your own config (` + config.UserFile() + `); see docs/security.md#isolation-levels`

// StartFix is what to do about a sandbox whose helper would not start,
// from what the engine said; fallback when it says nothing known.
func StartFix(err error, fallback string) string {
	if strings.Contains(err.Error(), "root network namespace") {
		return GVisorFlagsFix
	}
	return fallback
}

// OneLineErr is the first line of err, or "no answer" for none.
func OneLineErr(err error) string {
	if err == nil {
		return "no answer"
	}
	return agenttext.FirstLine(err.Error())
}

// IsolationOf is what runs a sandbox of cfg under gVisor; nil for the
// engine's default runtime.
func IsolationOf(cfg config.Config) *box.Isolation {
	if cfg.Isolation != config.IsolationGVisor {
		return nil
	}
	return &box.Isolation{Runtime: cfg.GVisorRuntime, Flags: cfg.GVisorFlags, RuntimeClass: cfg.RuntimeClass, HostSockets: egressproxy.Used(cfg),
		Network: cfg.Network != "none" || cfg.SetupOpensNetwork() || len(cfg.Ports) > 0}
}
