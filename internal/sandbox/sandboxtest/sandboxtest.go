//go:build linux

// Package sandboxtest gives tests a sandbox Manager with no engine behind
// it: a new repository on disk, real git, and the in-memory provider
// (internal/box/membox), which runs the real helper in the test's process
// on a temp directory per sandbox.
package sandboxtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box/membox"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// Mem is a Manager of a new repository holding testenv.SmallFiles (plus
// files, path -> content), its sandboxes in the returned provider.
func Mem(t testing.TB, files testenv.Files) (*sandbox.Manager, *membox.Provider) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memrepo")
	all := testenv.Files{}
	for p, c := range testenv.SmallFiles {
		all[p] = c
	}
	for p, c := range files {
		all[p] = c
	}
	testenv.NewRepo(t, dir, all)
	m, err := sandbox.Open(context.Background(), testenv.Exec(), engine.Docker, dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	p := membox.New(t.TempDir())
	m.Repo.Provider = p
	// The test binary stands for the helper: membox runs the helper in
	// process, whatever file was delivered.
	m.Agent.PinHelper(os.Args[0], "mem")
	return m, p
}

// Sandbox is Mem with a sandbox of that name created in it.
func Sandbox(t testing.TB, name string, files testenv.Files) (*sandbox.Manager, *membox.Provider) {
	t.Helper()
	m, p := Mem(t, files)
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: name}); err != nil {
		t.Fatal(err)
	}
	return m, p
}
