package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// ImageFile reads one file of an image, from a container made and never
// started: no process of the image runs, and no shell is needed.
func (im *Builder) ImageFile(ctx context.Context, image, path string) ([]byte, error) {
	name := im.Repo.ScratchName("look")
	scratch := box.Of(im.Repo.Provider, name)
	spec := box.Spec{Name: name, Image: image, Labels: im.Repo.Labels("", hostrepo.RoleCopy), Network: "none", Entrypoint: "/litterbox-never-runs"}
	if _, err := im.Repo.Provider.Create(ctx, spec); err != nil {
		return nil, err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = scratch.Remove(ctx)
	}()
	var buf bytes.Buffer
	if err := scratch.CopyOut(ctx, path, &buf); err != nil {
		return nil, err
	}
	tr := tar.NewReader(&buf)
	if _, err := tr.Next(); err != nil {
		return nil, fmt.Errorf("reading %s of image %s: %w", path, image, err)
	}
	return io.ReadAll(io.LimitReader(tr, 1<<20))
}

// lookupUser finds a user name in passwd (the image's /etc/passwd).
func lookupUser(passwd []byte, name string) (uid, gid int, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(passwd))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 4 || f[0] != name {
			continue
		}
		u, err1 := strconv.Atoi(f[2])
		g, err2 := strconv.Atoi(f[3])
		return u, g, err1 == nil && err2 == nil
	}
	return 0, 0, false
}

// DevcontainerImage completes what devcontainer.json left to the image:
// a user given by name, and values that name the image's environment.
func (im *Builder) DevcontainerImage(ctx context.Context, cfg *config.Config) error {
	f := cfg.Devcontainer()
	if name := cfg.UserName(); name != "" {
		passwd, err := im.ImageFile(ctx, cfg.Image, "/etc/passwd")
		if err != nil {
			return fmt.Errorf("%s: looking up remoteUser %q in image %s: %w", f.Name, name, cfg.Image, err)
		}
		uid, gid, ok := lookupUser(passwd, name)
		if !ok {
			return fmt.Errorf("%s: remoteUser %q is not in image %s's /etc/passwd; give a numeric uid or set [docker] user", f.Name, name, cfg.Image)
		}
		cfg.SetUser(uid, gid)
	}
	if cfg.NeedsImageEnv() {
		env, err := box.Images(im.Repo.Provider).ImageEnv(ctx, cfg.Image)
		if err != nil {
			return fmt.Errorf("%s: reading image %s's environment: %w", f.Name, cfg.Image, err)
		}
		cfg.ExpandImageEnv(env)
	}
	return nil
}
