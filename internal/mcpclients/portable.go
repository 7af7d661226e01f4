package mcpclients

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Command is how an entry runs Litterbox: by name, from the PATH of
// whoever's client starts it, so a committed entry works on every
// machine that has Litterbox installed.
const Command = "litterbox"

// Portability is whether one client's litterbox entry in a project works
// in every clone: no path of this machine, and no other repository.
type Portability struct {
	Client string
	// File is the client's project file, relative to the root.
	File string
	// Other: the entry serves another repository (or another clone).
	Other bool
	// Portable: nothing of this machine is in the entry.
	Portable bool
	// Detail says what was found, in one line.
	Detail string
	// Fix is the command that rewrites the entry.
	Fix string
}

// Portable checks the litterbox entry of each client whose project file
// in root has one.
func Portable(root string) []Portability {
	var out []Portability
	for _, c := range Clients {
		data, err := os.ReadFile(filepath.Join(root, c.File))
		if err != nil {
			continue
		}
		for name, cmd := range c.serverCommands(data) {
			if !isLitterbox(name, cmd) {
				continue
			}
			p := c.portability(root, cmd)
			p.Client, p.File, p.Fix = c.Name, c.File, "litterbox mcp-config "+c.Name+" --write"
			if name != "litterbox" {
				p.Fix += " --name " + name
			}
			out = append(out, p)
		}
	}
	return out
}

func isLitterbox(name string, cmd []string) bool {
	return name == "litterbox" || len(cmd) > 1 && strings.HasPrefix(filepath.Base(cmd[0]), "litterbox") && slices.Contains(cmd[1:], "mcp")
}

// portability judges one entry's command line.
func (c Client) portability(root string, cmd []string) Portability {
	var machine []string
	if len(cmd) > 0 && filepath.IsAbs(cmd[0]) {
		machine = append(machine, "runs "+cmd[0])
	}
	repo := repoArg(cmd)
	if repo != "" && !slices.Equal(c.RepoArgs, []string{"--repo", repo}) {
		if !sameDir(repo, root) {
			return Portability{Other: true, Detail: fmt.Sprintf("serves the repository at %s, not this one (%s)", repo, root)}
		}
		machine = append(machine, "names this clone's path with --repo")
	}
	if len(machine) > 0 {
		return Portability{Detail: strings.Join(machine, " and ") + ": another clone, or a teammate's machine, would get this machine's paths"}
	}
	return Portability{Portable: true, Detail: "runs litterbox from PATH on the client's project"}
}

// repoArg is the value of the entry's --repo, if it has one.
func repoArg(cmd []string) string {
	for i, a := range cmd {
		if a == "--repo" && i+1 < len(cmd) {
			return cmd[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--repo="); ok {
			return v
		}
	}
	return ""
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}
