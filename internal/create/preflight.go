package create

import (
	"context"
	"errors"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/preflight"
)

// preflight is what create checks before it makes anything: the engine
// answers and has the image (pulled if need be). The config, the base commit
// and the ports are checked by the steps that use them.
//
// It returns the image's id, which the setup cache's key needs: one
// inspect tells both.
func (m *Creator) preflight(ctx context.Context, cfg config.Config) (imageID string, err error) {
	cli := m.Repo.Provider
	h, err := m.Agent.FindHelper()
	if err != nil {
		return "", &preflight.Error{Check: box.Check{Name: "helper", Status: box.CheckFail, Detail: err.Error()}, Err: err}
	}
	m.Agent.Helper = h
	info, err := box.Images(cli).Image(ctx, cfg.Image)
	present := err == nil
	if errors.Is(err, box.ErrImageNotFound) {
		err = nil
	}
	if err != nil {
		if errors.Is(err, box.ErrEngineUnreachable) || errors.Is(err, box.ErrBinaryMissing) {
			_, server, verr := cli.Versions(ctx)
			return "", &preflight.Error{Check: preflight.EngineCheck(ctx, cli, server, verr), Err: err}
		}
		return "", &preflight.Error{Check: box.Check{Name: "image", Status: box.CheckFail, Detail: cfg.Image + ": " + preflight.OneLineErr(err)}, Err: err}
	}
	if !present {
		if c := preflight.PullCheck(ctx, cli, m.Repo.Runtime.Bin, cfg.Image, cfg.From["docker.image"]); c.Status == box.CheckFail {
			return "", &preflight.Error{Check: c, Err: box.ErrImageNotFound}
		}
		if info, err = box.Images(cli).Image(ctx, cfg.Image); err != nil {
			return "", &preflight.Error{Check: box.Check{Name: "image", Status: box.CheckFail, Detail: cfg.Image + ": " + preflight.OneLineErr(err)}, Err: err}
		}
	}
	if err := h.CheckPlatform(cfg.Image, info.Platform); err != nil {
		return "", &preflight.Error{Check: box.Check{Name: "image", Status: box.CheckFail, Detail: err.Error()}, Err: err}
	}
	if iso := preflight.IsolationOf(cfg); iso != nil {
		if ch, ok := cli.(box.IsolationChecker); ok {
			if err := ch.CheckIsolation(ctx, iso); err != nil {
				return "", &preflight.Error{Check: box.Check{Name: "isolation", Status: box.CheckFail, Detail: err.Error()}, Err: err}
			}
		}
	}
	return info.ID, nil
}
