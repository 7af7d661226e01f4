package sandbox

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// Config is how sandboxes of one repository are made.
type Config struct {
	// ProjectSlug overrides the repo slug derived from the root's basename.
	ProjectSlug  string
	Image        string
	SetupCommand string
	// User is "uid:gid", numeric: the tree copied into /src is given to it.
	User      string
	Network   string
	ReadOnly  bool
	Memory    string
	CPUs      string
	PidsLimit int
	Env       map[string]string
}

// DefaultConfig is what a repository without configuration gets.
func DefaultConfig() Config {
	cpus := 2
	if n := runtime.NumCPU(); n < cpus {
		cpus = n
	}
	return Config{
		Image:        "busybox:latest",
		SetupCommand: "echo hello world",
		User:         "1000:1000",
		Network:      "none",
		ReadOnly:     true,
		Memory:       "2g",
		CPUs:         strconv.Itoa(cpus),
		PidsLimit:    512,
	}
}

// ids parses User into numeric ids.
func (c Config) ids() (uid, gid int, err error) {
	u, g, ok := strings.Cut(c.User, ":")
	if !ok {
		g = u
	}
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("sandbox user %q must be numeric uid:gid", c.User)
	}
	return uid, gid, nil
}
