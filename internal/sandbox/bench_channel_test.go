//go:build integration

package sandbox

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// The calls of a process that keeps a channel per sandbox (litterbox mcp,
// litterbox run), beside the raw exec each call would otherwise cost:
// BashNoop's and Write's floors are RawBashNoop and RawWrite at each size.

// keptOn makes m's calls go over channels until the benchmark ends.
func keptOn(b *testing.B, m *Manager) *Manager {
	m.Agent.KeepChannels()
	b.Cleanup(m.Agent.Close)
	return m
}

func benchBashNoopKept(b *testing.B, files testenv.Files) {
	m, _ := benchToolSandbox(b, files)
	benchBashNoopIn(b, keptOn(b, m))
}

func benchWriteKept(b *testing.B, files testenv.Files) {
	m, _ := benchToolSandbox(b, files)
	benchWriteIn(b, keptOn(b, m))
}

func BenchmarkBashNoopKept(b *testing.B)    { benchBashNoopKept(b, testenv.SmallFiles) }
func BenchmarkWriteKept(b *testing.B)       { benchWriteKept(b, testenv.SmallFiles) }
func BenchmarkBashNoopKept10k(b *testing.B) { benchBashNoopKept(b, bigFiles(10000)) }
func BenchmarkWriteKept10k(b *testing.B)    { benchWriteKept(b, bigFiles(10000)) }

func BenchmarkBashNoopKeptGoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	benchBashNoopOn(b, keptOn(b, m), n.Slug)
}

func BenchmarkWriteKeptGoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	benchWriteOn(b, keptOn(b, m), n.Slug)
}

// BenchmarkBashNoopKeptBeside8 is BashNoopKept while eight sandboxes of
// another repository run, as on a machine where agents work; its floor is
// RawBashNoopBeside8.
func BenchmarkBashNoopKeptBeside8(b *testing.B) {
	beside(b, 8)
	benchBashNoopKept(b, testenv.SmallFiles)
}

func BenchmarkRawBashNoopBeside8(b *testing.B) {
	beside(b, 8)
	benchRawExec(b, testenv.SmallFiles)
}

// The same calls in a sandbox of 100,000 files (the repository is made
// once per process, manager100k), each beside its raw floor.
func BenchmarkBashNoop100k(b *testing.B) { m, n := sandbox100k(b); benchBashNoopOn(b, m, n.Slug) }
func BenchmarkBashNoopKept100k(b *testing.B) {
	m, n := sandbox100k(b)
	benchBashNoopOn(b, keptOn(b, m), n.Slug)
}
func BenchmarkRawBashNoop100k(b *testing.B) { _, n := sandbox100k(b); benchRawExecIn(b, n) }
func BenchmarkWrite100k(b *testing.B)       { m, n := sandbox100k(b); benchWriteOn(b, m, n.Slug) }
func BenchmarkWriteKept100k(b *testing.B) {
	m, n := sandbox100k(b)
	benchWriteOn(b, keptOn(b, m), n.Slug)
}
func BenchmarkRawWrite100k(b *testing.B) { benchRawWriteIn(b, sandbox100k) }

// sandbox100k is a sandbox of its own over the 100,000-file repository,
// deleted when the benchmark ends.
func sandbox100k(b *testing.B) (*Manager, hostrepo.Names) { return sandboxOf(b, manager100k(b), "h") }
