// Package devcontainer reads a repository's dev container definition
// (devcontainer.json, https://containers.dev/implementors/json_reference/)
// and keeps the parts Litterbox can honour: the image or how to build it,
// the environment, the commands that set the workspace up, the ports and
// the user. Everything else the file asks for is named in File.Ignored so
// the caller can say so: a sandbox that silently differs from what the
// repository describes is harder to debug than one that says how it differs.
package devcontainer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
)

// Files are the names searched, in order, relative to the repository root.
var Files = []string{".devcontainer/devcontainer.json", ".devcontainer.json"}

// File is what Litterbox takes from a devcontainer.json.
type File struct {
	Name  string // rel, as given
	Image string // "image"
	Build *Build // "build" (or the legacy top-level "dockerFile"/"context"); nil when absent
	// Env is containerEnv and remoteEnv merged, remoteEnv winning per
	// variable. Values may still hold ${containerEnv:NAME} until
	// ExpandContainerEnv is called.
	Env map[string]string
	// Setup is onCreateCommand, updateContentCommand and postCreateCommand,
	// in that order, as one /bin/sh command line joined with " && " (""
	// when none). An array is an argv, each word single-quoted; an object's
	// commands come in key order. A string is a shell line, used as is
	// when it is the only command, else run as sh -c '<line>'. It may
	// still hold ${containerEnv:NAME} until ExpandContainerEnv is called.
	Setup string
	Ports []Port // forwardPorts, named from portsAttributes
	// User is remoteUser, else containerUser, as written ("" when neither):
	// the caller resolves a name in the image.
	User string
	// Ignored names, one short line each, what the file asks for that
	// Litterbox does not do. Sorted.
	Ignored []string

	// What ExpandContainerEnv needs to recompute Env and Setup, so that
	// calling it again (with another image) starts from the file.
	containerEnv map[string]string
	remoteEnv    map[string]string
	unset        []string // remoteEnv variables set to null
	steps        []step
}

// Build is how to build the image.
type Build struct {
	Dockerfile string // relative to the repository root, forward slashes, cleaned
	Context    string // relative to the repository root; default: the devcontainer.json's directory
	Args       map[string]string
	Target     string
}

// Port is a port of the container to publish.
type Port struct {
	// Name is a slug: from portsAttributes[port].label, else "port-<n>";
	// unique within File.Ports.
	Name   string
	Target int // 1..65535
}

// Find returns the first of Files that exists under root, relative to
// root (forward slashes), or "" when neither exists.
func Find(root string) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	for _, rel := range Files {
		fi, err := r.Stat(filepath.FromSlash(rel))
		if absent(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: %v", rel, unwrapPath(err))
		}
		if fi.IsDir() {
			return "", fmt.Errorf("%s: is a directory", rel)
		}
		return rel, nil
	}
	return "", nil
}

// absent reports whether err means there is no such file; ENOTDIR counts
// because a file named .devcontainer leaves no room for the directory.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// Load reads the file rel (as returned by Find) under root. It reads
// through an os.Root so that a symbolic link in the repository cannot make
// it read a file of the host's.
func Load(root, rel string) (*File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := r.ReadFile(filepath.FromSlash(rel))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", rel, unwrapPath(err))
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	return parse(rel, data, filepath.Base(abs))
}

// Parse is Load on bytes already read. name is the file's path relative to
// the repository root: it starts every error, and build paths resolve from
// its directory. ${localWorkspaceFolderBasename} becomes "", as there is
// no repository directory to take the name of.
func Parse(name string, data []byte) (*File, error) {
	return parse(name, data, "")
}

func parse(name string, data []byte, base string) (*File, error) {
	top, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	p := &parser{
		name: name,
		dir:  path.Dir(filepath.ToSlash(name)),
		base: base,
		top:  top,
		used: map[string]bool{},
		f:    &File{Name: name},
	}
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.f, nil
}

// unwrapPath drops the path an *fs.PathError repeats, since the caller
// already starts the message with the file name.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
