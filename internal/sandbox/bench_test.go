//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/basetree"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/internal/textedit"
)

// Each Benchmark<Op> has a BenchmarkRaw<Op> next to it running the bare docker
// (and git) commands the operation is made of: the floor it cannot beat.
// make bench prints the ratios into BENCHMARKS.md.

func benchManager(b *testing.B) *Manager { return benchManagerOf(b, testenv.SmallFiles) }

func benchManagerOf(b *testing.B, files testenv.Files) *Manager {
	return benchManagerCfg(b, files, config.Default())
}

// benchManagerCfg is a Manager of a new repository of files, with cfg.
func benchManagerCfg(b *testing.B, files testenv.Files, cfg config.Config) *Manager {
	b.Helper()
	dir := b.TempDir() + "/" + testenv.UniqueName("lbbench")
	testenv.NewRepo(b, dir, files)
	m, err := Open(context.Background(), testenv.Exec(), engine.Docker, dir, cfg)
	if err != nil {
		b.Fatal(err)
	}
	testenv.CleanupRepo(b, m.Repo.Root, m.Repo.RepoSlug)
	return m
}

func docker(b testing.TB, args ...string) {
	b.Helper()
	if out, err := testenv.Docker(args...); err != nil {
		b.Fatalf("docker %v: %v %s", args, err, out)
	}
}

// BenchmarkCreate<size> is the first create of a commit, which makes the
// commit's base tree (removed again, untimed, after each); the
// CreateSecond twins create while a sandbox of the commit lives, over its
// tree. Both are measured against the raw copy of the tree.
func BenchmarkCreate(b *testing.B)            { benchCreate(b, benchManagerOf(b, testenv.SmallFiles)) }
func BenchmarkCreateSecond(b *testing.B)      { benchCreateSecond(b, benchManagerOf(b, testenv.SmallFiles)) }
func BenchmarkRawCreate(b *testing.B)         { benchRawCreate(b, testenv.SmallFiles) }
func BenchmarkCreate10k(b *testing.B)         { benchCreate(b, benchManagerOf(b, bigFiles(10000))) }
func BenchmarkCreateSecond10k(b *testing.B)   { benchCreateSecond(b, benchManagerOf(b, bigFiles(10000))) }
func BenchmarkRawCreate10k(b *testing.B)      { benchRawCreate(b, bigFiles(10000)) }
func BenchmarkCreateGoSrc(b *testing.B)       { benchCreate(b, goSrcManager(b)) }
func BenchmarkCreateSecondGoSrc(b *testing.B) { benchCreateSecond(b, goSrcManager(b)) }
func BenchmarkRawCreateGoSrc(b *testing.B)    { benchRawCreateWith(b, goSrcManager(b)) }
func BenchmarkCreate100k(b *testing.B)        { benchCreate(b, manager100k(b)) }
func BenchmarkCreateSecond100k(b *testing.B)  { benchCreateSecond(b, manager100k(b)) }
func BenchmarkRawCreate100k(b *testing.B)     { benchRawCreateWith(b, manager100k(b)) }

// manager100k is a Manager of a repository of 100,000 generated files,
// made once per test process (git takes most of a minute over it).
func manager100k(b *testing.B) *Manager {
	b.Helper()
	big100k.once.Do(func() {
		big100k.dir = filepath.Join(os.TempDir(), testenv.UniqueName("lbbench100k"))
		testenv.NewRepo(b, big100k.dir, bigFiles(100000))
	})
	m, err := Open(context.Background(), testenv.Exec(), engine.Docker, big100k.dir, config.Default())
	if err != nil {
		b.Fatal(err)
	}
	testenv.CleanupRepo(b, m.Repo.Root, m.Repo.RepoSlug)
	return m
}

var big100k struct {
	once sync.Once
	dir  string
}

// remove100k is TestMain's cleanup.
func remove100k() {
	if big100k.dir != "" {
		os.RemoveAll(big100k.dir)
	}
}

// benchCreate times first creates with m: each sandbox and its base tree
// are removed, untimed, after it.
func benchCreate(b *testing.B, m *Manager) {
	benchMakes(b, m, func(ctx context.Context, name string) (*create.Created, error) {
		clearBases(b, m)
		b.StartTimer()
		defer b.StopTimer()
		return m.Create(ctx, create.CreateOptions{Name: name})
	})
}

// benchCreateSecond times creates with m while a sandbox of the same
// commit lives.
func benchCreateSecond(b *testing.B, m *Manager) {
	name := testenv.UniqueName("first")
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: name}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = m.Delete(context.Background(), name, true) })
	benchCreates(b, m)
}

// clearBases removes m's base trees, untimed: the next create makes its own.
func clearBases(b *testing.B, m *Manager) {
	b.StopTimer()
	if out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "label=dev.litterbox.managed="+basetree.Role, "--filter", "label=dev.litterbox.repo-id="+m.Repo.RepoID); out != "" {
		docker(b, append([]string{"volume", "rm"}, strings.Fields(out)...)...)
	}
	if err := os.RemoveAll(m.Repo.Layout().Bases()); err != nil {
		b.Fatal(err)
	}
	settle()
}

// benchCreates times creates with m, each sandbox deleted untimed.
func benchCreates(b *testing.B, m *Manager) {
	benchMakes(b, m, func(ctx context.Context, name string) (*create.Created, error) {
		return m.Create(ctx, create.CreateOptions{Name: name})
	})
}

// benchMakes times makeOne, which makes one sandbox of the given name; each
// is deleted untimed, with the disk settled.
func benchMakes(b *testing.B, m *Manager, makeOne func(ctx context.Context, name string) (*create.Created, error)) {
	ctx := context.Background()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("c%d", i)
		i++
		if _, err := makeOne(ctx, name); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := m.Delete(ctx, name, true); err != nil {
			b.Fatal(err)
		}
		settle()
		b.StartTimer()
	}
}

// settle flushes the writes a removed volume left behind, so the next
// iteration does not pay for the previous one's IO: with 10,000 files a raw
// docker cp took 0.8 s after a settled disk and 3 s right after a volume rm.
func settle() { syscall.Sync() }

func benchRawCreate(b *testing.B, files testenv.Files) {
	benchRawCreateWith(b, benchManagerOf(b, files))
}

// benchRawCreateWith times raw creates of m's repository and config.
func benchRawCreateWith(b *testing.B, m *Manager) {
	base := testenv.Git(b, m.Repo.Root, "rev-parse", "HEAD")
	cli := dockercli.New("docker", testenv.Exec())
	i := 0
	for b.Loop() {
		n := m.Repo.Names(fmt.Sprintf("raw%d", i))
		i++
		rawCreate(b, m, cli, n, base)
		b.StopTimer()
		docker(b, "rm", "-f", "-v", n.Container)
		docker(b, "volume", "rm", "-f", n.Volume, n.Container+"-home") // the home too
		settle()
		b.StartTimer()
	}
}

// rawCreate is a create done by hand: docker run, the tree by git archive
// into docker cp, the setup by docker exec.
func rawCreate(b *testing.B, m *Manager, cli *dockercli.Client, n hostrepo.Names, base string) {
	b.Helper()
	ctx := context.Background()
	spec := m.Creator.ContainerSpec(n, base, m.Repo.Config, nil, helperbin.Pinned("", "raw"))
	spec.Entrypoint, spec.Cmd, spec.AnonVolumes = "/bin/sh", []string{"-c", "sleep 1000000"}, nil
	if _, err := cli.Run(ctx, spec); err != nil {
		b.Fatal(err)
	}
	if _, err := cli.Exec(ctx, n.Container, box.ExecSpec{User: "0:0", Cmd: []string{"chmod", "0777", "/src"}}, box.Streams{}); err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(m.Repo.Git.Archive(ctx, base, pw)) }()
	if err := cli.CopyIn(ctx, n.Container, "/src", pr); err != nil {
		b.Fatal(err)
	}
	if _, err := cli.Exec(ctx, n.Container, box.ExecSpec{User: "1000:1000", Cmd: []string{"sh", "-c", "echo hello world"}}, box.Streams{}); err != nil {
		b.Fatal(err)
	}
}

func benchSandbox(b *testing.B) (*Manager, hostrepo.Names) {
	m := benchManager(b)
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	return m, m.Repo.Names("bench")
}

func BenchmarkPauseResume(b *testing.B) {
	m, _ := benchSandbox(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Pause(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Resume(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawPauseResume(b *testing.B) {
	_, n := benchSandbox(b)
	for b.Loop() {
		docker(b, "pause", n.Container)
		docker(b, "unpause", n.Container)
	}
}

func listRepo(b *testing.B, count int) *Manager {
	m := benchManager(b)
	for i := range count {
		// More than an agent may make in a repository: a person's.
		if _, err := m.Create(context.Background(), create.CreateOptions{Name: fmt.Sprintf("l%02d", i), OverLimit: true}); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

func BenchmarkList50(b *testing.B) {
	m := listRepo(b, 50)
	// The first list counts each branch's commits; later ones find them cached.
	if _, err := m.List(context.Background(), false); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		list, err := m.List(context.Background(), false)
		if err != nil || len(list) != 50 {
			b.Fatalf("%d %v", len(list), err)
		}
	}
}

func BenchmarkRawList50(b *testing.B) {
	m := listRepo(b, 50)
	for b.Loop() {
		docker(b, "ps", "-a", "--filter", "label=dev.litterbox.repo="+m.Repo.Root)
	}
}

func BenchmarkDelete(b *testing.B) {
	m := benchManager(b)
	benchDeletes(b, m, func(ctx context.Context, name string) {
		if _, err := m.Delete(ctx, name, true); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkRawDelete(b *testing.B) {
	m := benchManager(b)
	benchDeletes(b, m, func(_ context.Context, name string) {
		n := m.Repo.Names(name)
		docker(b, "rm", "-f", "-v", n.Container)
		docker(b, "volume", "rm", "-f", n.Volume, n.Container+"-home") // the home too
	})
}

// benchDeletes times del on a sandbox made, untimed, for each round.
func benchDeletes(b *testing.B, m *Manager, del func(ctx context.Context, name string)) {
	ctx := context.Background()
	i := 0
	for b.Loop() {
		b.StopTimer()
		name := fmt.Sprintf("d%d", i)
		i++
		if _, err := m.Create(ctx, create.CreateOptions{Name: name}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		del(ctx, name)
	}
}

// bigFiles is a generated repository of n files in 100 directories.
func bigFiles(n int) testenv.Files {
	files := testenv.Files{"README.md": "big\n"}
	for i := range n - 1 {
		files[fmt.Sprintf("pkg%02d/file%05d.txt", i%100, i)] = fmt.Sprintf("content %d\n", i)
	}
	return files
}

func benchToolSandbox(b *testing.B, files testenv.Files) (*Manager, hostrepo.Names) {
	return benchSandboxIn(b, benchManagerOf(b, files))
}

// benchSandboxIn makes sandbox "bench" with m.
func benchSandboxIn(b *testing.B, m *Manager) (*Manager, hostrepo.Names) {
	b.Helper()
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	return m, m.Repo.Names("bench")
}

func benchBashNoop(b *testing.B, files testenv.Files) {
	m, _ := benchToolSandbox(b, files)
	benchBashNoopIn(b, m)
}

func benchBashNoopIn(b *testing.B, m *Manager) { benchBashNoopOn(b, m, "bench") }

// benchBashNoopOn times bash calls of true in sandbox slug.
func benchBashNoopOn(b *testing.B, m *Manager, slug string) {
	ctx := context.Background()
	for b.Loop() {
		res, err := m.Agent.Bash(ctx, slug, agent.BashOptions{Command: "true"})
		if err != nil || res.Snapshot != "" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func benchRawExec(b *testing.B, files testenv.Files) {
	_, n := benchToolSandbox(b, files)
	benchRawExecIn(b, n)
}

func benchRawExecIn(b *testing.B, n hostrepo.Names) {
	for b.Loop() {
		docker(b, "exec", "--user", "1000:1000", n.Container, "sh", "-c", "true")
	}
}

func benchWrite(b *testing.B, files testenv.Files) {
	m, _ := benchToolSandbox(b, files)
	benchWriteIn(b, m)
}

func benchWriteIn(b *testing.B, m *Manager) { benchWriteOn(b, m, "bench") }

// benchWriteOn times write calls, each a new content, in sandbox slug.
func benchWriteOn(b *testing.B, m *Manager, slug string) {
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		res, err := m.Agent.Write(ctx, slug, "written.txt", []byte(fmt.Sprintf("version %d %d\n", os.Getpid(), i)))
		if err != nil || res.Snapshot == "" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func benchRawWrite(b *testing.B, files testenv.Files) {
	benchRawWriteIn(b, func(b *testing.B) (*Manager, hostrepo.Names) { return benchToolSandbox(b, files) })
}

func benchRawWriteIn(b *testing.B, sandbox func(*testing.B) (*Manager, hostrepo.Names)) {
	_, n := sandbox(b)
	cli := dockercli.New("docker", testenv.Exec())
	i := 0
	for b.Loop() {
		i++
		_, err := cli.Exec(context.Background(), n.Container, box.ExecSpec{User: "1000:1000", Interactive: true,
			Cmd: []string{"sh", "-c", "cat > /src/written.txt"}}, box.Streams{Stdin: strings.NewReader(fmt.Sprintf("version %d\n", i))})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func benchEdit(b *testing.B, files testenv.Files) {
	m, n := benchToolSandbox(b, files)
	benchEditOn(b, m, n.Slug)
}

// benchEditOn times edit calls in sandbox slug, each replacing the line
// the last one wrote.
func benchEditOn(b *testing.B, m *Manager, slug string) {
	ctx := context.Background()
	if _, err := m.Agent.Write(ctx, slug, "edited.txt", []byte("line 0\n")); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		res, err := m.Agent.Edit(ctx, slug, "edited.txt", []textedit.Op{{Old: fmt.Sprintf("line %d\n", i), New: fmt.Sprintf("line %d\n", i+1)}})
		i++
		if err != nil || res.Snapshot == "" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func benchRawEdit(b *testing.B, files testenv.Files) {
	_, n := benchToolSandbox(b, files)
	benchRawEditIn(b, n)
}

// benchRawEditIn is an edit's floor: sed -i of one line, by docker exec.
func benchRawEditIn(b *testing.B, n hostrepo.Names) {
	docker(b, "exec", "--user", "1000:1000", n.Container, "sh", "-c", "echo 'line 0' > /src/raw-edited.txt")
	i := 0
	for b.Loop() {
		docker(b, "exec", "--user", "1000:1000", n.Container, "sed", "-i", fmt.Sprintf("s/^line %d$/line %d/", i, i+1), "/src/raw-edited.txt")
		i++
	}
}

func benchRead(b *testing.B, files testenv.Files) {
	m, n := benchToolSandbox(b, files)
	benchReadIn(b, m, n, "README.md")
}

// benchReadIn reads the file at path (relative to /src) with the read tool.
func benchReadIn(b *testing.B, m *Manager, n hostrepo.Names, path string) {
	ctx := context.Background()
	for b.Loop() {
		res, err := m.Agent.Read(ctx, n.Slug, path, 0, 0)
		if err != nil || res.Content == "" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func benchRawRead(b *testing.B, files testenv.Files) {
	_, n := benchToolSandbox(b, files)
	benchRawReadIn(b, n, "README.md")
}

func benchRawReadIn(b *testing.B, n hostrepo.Names, path string) {
	for b.Loop() {
		docker(b, "exec", "--user", "1000:1000", n.Container, "cat", "/src/"+path)
	}
}

func BenchmarkRead(b *testing.B)           { benchRead(b, testenv.SmallFiles) }
func BenchmarkRawRead(b *testing.B)        { benchRawRead(b, testenv.SmallFiles) }
func BenchmarkBashNoop(b *testing.B)       { benchBashNoop(b, testenv.SmallFiles) }
func BenchmarkRawBashNoop(b *testing.B)    { benchRawExec(b, testenv.SmallFiles) }
func BenchmarkWrite(b *testing.B)          { benchWrite(b, testenv.SmallFiles) }
func BenchmarkRawWrite(b *testing.B)       { benchRawWrite(b, testenv.SmallFiles) }
func BenchmarkBashNoop10k(b *testing.B)    { benchBashNoop(b, bigFiles(10000)) }
func BenchmarkRawBashNoop10k(b *testing.B) { benchRawExec(b, bigFiles(10000)) }
func BenchmarkWrite10k(b *testing.B)       { benchWrite(b, bigFiles(10000)) }
func BenchmarkRead10k(b *testing.B)        { benchRead(b, bigFiles(10000)) }
func BenchmarkRawRead10k(b *testing.B)     { benchRawRead(b, bigFiles(10000)) }
func BenchmarkRawWrite10k(b *testing.B)    { benchRawWrite(b, bigFiles(10000)) }
func BenchmarkEdit(b *testing.B)           { benchEdit(b, testenv.SmallFiles) }
func BenchmarkRawEdit(b *testing.B)        { benchRawEdit(b, testenv.SmallFiles) }
func BenchmarkEdit10k(b *testing.B)        { benchEdit(b, bigFiles(10000)) }
func BenchmarkRawEdit10k(b *testing.B)     { benchRawEdit(b, bigFiles(10000)) }
