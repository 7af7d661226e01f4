package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/devcontainer"
)

// devcontainerFile reads the repository's devcontainer.json, if it has one,
// as one more config file: below .litterbox.toml, which wins key by key.
// A user named by name (not uid) is left in *userName for create to look
// up in the image.
func devcontainerFile(root string) (*fileConfig, *devcontainer.File, error) {
	rel, err := devcontainer.Find(root)
	if err != nil || rel == "" {
		return nil, nil, err
	}
	f, err := devcontainer.Load(root, rel)
	if err != nil {
		return nil, nil, &Error{File: rel, Msg: strings.TrimPrefix(err.Error(), rel+": ")}
	}
	var fc fileConfig
	d := &fc.Docker
	if f.Image != "" {
		d.Image = &f.Image
	}
	if b := f.Build; b != nil {
		d.Build, d.Context, d.Args = &b.Dockerfile, &b.Context, b.Args
		if b.Target != "" {
			d.Target = &b.Target
		}
	}
	if f.Setup != "" {
		d.SetupCommand = &f.Setup
	}
	d.Env = maps.Clone(f.Env)
	for _, p := range f.Ports {
		name, target := p.Name, portNumber(p.Target)
		fc.Ports = append(fc.Ports, filePort{Name: &name, Target: &target})
	}
	switch u := f.User; {
	case u == "":
	case u != "root" && !userRE.MatchString(u):
		// A name: the default until create looks it up in the image.
		id := userID(defaultUser)
		d.User = &id
	case u == "root":
		id := userID("0:0")
		d.User = &id
	case userRE.MatchString(u):
		var id userID
		if err := id.UnmarshalTOML(u); err != nil {
			return nil, nil, &Error{File: rel, Key: "remoteUser", Msg: err.Error()}
		}
		d.User = &id
	}
	return &fc, f, nil
}

// Devcontainer is the devcontainer.json this config was read with, nil
// when none was.
func (c Config) Devcontainer() *devcontainer.File { return c.devcontainer }

// UserName is a devcontainer.json user given by name, still to be looked
// up in the image: "" when the user is numeric or set by a later file.
func (c Config) UserName() string {
	f := c.devcontainer
	if f == nil || f.User == "" || f.User == "root" || userRE.MatchString(f.User) || c.From["docker.user"] != f.Name {
		return ""
	}
	return f.User
}

// SetUser gives the sandbox the user a name resolved to.
func (c *Config) SetUser(uid, gid int) { c.User = fmt.Sprintf("%d:%d", uid, gid) }

// NeedsImageEnv says whether a value from devcontainer.json refers to
// the image's environment (${containerEnv:NAME}).
func (c Config) NeedsImageEnv() bool {
	f := c.devcontainer
	if f == nil {
		return false
	}
	if c.From["docker.setup-command"] == f.Name && strings.Contains(c.SetupCommand, "${containerEnv:") {
		return true
	}
	for k, v := range c.Env {
		if c.From["docker.env."+k] == f.Name && strings.Contains(v, "${containerEnv:") {
			return true
		}
	}
	return false
}

// ExpandImageEnv fills in devcontainer.json's ${containerEnv:NAME} from
// the image's environment, in the values that still come from that file.
func (c *Config) ExpandImageEnv(image map[string]string) {
	f := c.devcontainer
	if f == nil {
		return
	}
	f.ExpandContainerEnv(image)
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if c.From["docker.env."+k] == f.Name {
			c.Env[k] = f.Env[k]
		}
	}
	if c.From["docker.setup-command"] == f.Name {
		c.SetupCommand = f.Setup
	}
}

// IsCommitted says whether a config file of the repository comes with it
// (and so needs the user's trust to loosen a sandbox).
func IsCommitted(name string) bool {
	return name == File || slices.Contains(devcontainer.Files, name)
}
