// Package helperbin is the helper program as the host delivers it: found
// beside litterbox (or named by $LITTERBOX_HELPER, or litterbox itself),
// proven of the same build, checked to run in any Linux container, and
// copied into a sandbox's helper volume under an id of its build.
package helperbin

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/tarstream"
	"github.com/litterbox-dev/litterbox/runner"
)

// Env names a helper binary to deliver, in place of the one beside
// this executable: a static linux build of litterbox-helper (or of
// litterbox) for the engine's architecture.
const Env = "LITTERBOX_HELPER"

// Binary is the host file delivered into sandboxes as the helper.
type Binary struct {
	path string
	id   string
	Arch string // GOARCH of the binary
	// Libs, for a dynamically linked build (a plain `go install` on a
	// machine with a C compiler), are its ELF interpreter and libraries,
	// delivered beside it: base name -> host path. Loader is the
	// interpreter's base name; the helper runs through it.
	Libs   map[string]string
	Loader string
	// Self is set when litterbox delivers itself, there being no helper
	// program of its build beside it; Passed then says why one that is
	// there was not taken.
	Self   bool
	Passed string
}

var (
	localOnce sync.Once
	local     *Binary
	localErr  error
)

// Local locates and checks the helper binary once per process: the
// file $LITTERBOX_HELPER names; else the helper's own program beside this
// executable (Program), when it is provably of the same build; else,
// on Linux, this executable, which is the helper when started as
// litterbox-helper (a call then starts about 10 ms slower: the CLI's and
// the MCP server's package init).
func Local() (*Binary, error) {
	localOnce.Do(func() { local, localErr = locate() })
	return local, localErr
}

func locate() (*Binary, error) {
	if p := os.Getenv(Env); p != "" {
		return Inspect(p)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the litterbox executable, beside which the sandbox helper lies: %w", err)
	}
	self, _ := debug.ReadBuildInfo()
	return beside(exe, self)
}

// beside is the helper the litterbox at exe, of build self,
// delivers (Local).
func beside(exe string, self *debug.BuildInfo) (*Binary, error) {
	own := filepath.Join(filepath.Dir(exe), Program())
	passed := ""
	if _, err := os.Stat(own); err == nil {
		err := matchBuild(self, own)
		if err == nil {
			return Inspect(own)
		}
		passed = fmt.Sprintf("%s is not of this litterbox's build (%v)", own, err)
	}
	if runtime.GOOS != "linux" {
		if passed != "" {
			return nil, fmt.Errorf("no Linux helper to run inside sandboxes: %s; keep the two from one release archive, or set %s to a linux/%s litterbox-helper", passed, Env, runtime.GOARCH)
		}
		return nil, fmt.Errorf("no Linux helper to run inside sandboxes: the release archive for %s/%s has one beside litterbox (%s); or set %s to a linux/%s litterbox-helper", runtime.GOOS, runtime.GOARCH, own, Env, runtime.GOARCH)
	}
	h, err := Inspect(exe)
	if h != nil {
		h.Self, h.Passed = true, passed
	}
	return h, err
}

var elfArch = map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_386: "386", elf.EM_ARM: "arm", elf.EM_RISCV: "riscv64", elf.EM_PPC64: "ppc64le", elf.EM_S390: "s390x"}

// Inspect checks that p can run in any Linux container (a static
// ELF) and names it by its Go build id.
func Inspect(p string) (*Binary, error) {
	f, err := elf.Open(p)
	if err != nil {
		return nil, fmt.Errorf("sandbox helper %s is not a Linux executable (%v); a litterbox for %s/%s needs a Linux build for the engine: set %s to a static linux litterbox binary (the release archives include them)", p, err, runtime.GOOS, runtime.GOARCH, Env)
	}
	defer f.Close()
	h := &Binary{path: p, Arch: elfArch[f.Machine]}
	if err := h.findLibs(f); err != nil {
		return nil, fmt.Errorf("sandbox helper %s is dynamically linked and %v; build it static instead: CGO_ENABLED=0 go install github.com/litterbox-dev/litterbox/cmd/...@latest (or `make install`)", p, err)
	}
	if s := f.Section(".note.go.buildid"); s != nil {
		if data, err := s.Data(); err == nil && len(data) > 16 {
			sum := sha256.Sum256(data)
			h.id = hex.EncodeToString(sum[:8])
		}
	}
	if h.id == "" {
		file, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		sum := sha256.New()
		if _, err := io.Copy(sum, file); err != nil {
			return nil, err
		}
		h.id = hex.EncodeToString(sum.Sum(nil)[:8])
	}
	return h, nil
}

// Describe says what the helper is, for doctor.
func (h *Binary) Describe() string {
	link := "static"
	if h.Loader != "" {
		link = "dynamically linked, delivered with its " + strings.Join(slices.Sorted(maps.Keys(h.Libs)), ", ")
	}
	d := fmt.Sprintf("%s (linux/%s, %s)", h.path, h.Arch, link)
	switch {
	case h.Passed != "":
		d += "; litterbox itself: " + h.Passed + ", so each call starts about 10 ms slower"
	case h.Self:
		d += "; litterbox itself: no " + Program() + " beside it, so each call starts about 10 ms slower (make install, or go install github.com/litterbox-dev/litterbox/cmd/...@VERSION, installs both)"
	}
	return d
}

// ContainerPath is where the helper lives in a sandbox.
func (h *Binary) ContainerPath() string { return protocol.Dir + "/" + h.id + "/" + protocol.Name }

// Argv is the command line that runs the helper's command c in a sandbox:
// through its own copy of the ELF interpreter when it is dynamically
// linked, so it needs no libc from the image.
func (h *Binary) Argv(c protocol.Command) []string {
	if h.Loader == "" {
		return append([]string{h.ContainerPath()}, c.Argv()...)
	}
	lib := protocol.Dir + "/" + h.id + "/lib"
	return append([]string{lib + "/" + h.Loader, "--library-path", lib, h.ContainerPath()}, c.Argv()...)
}

// libDirs are where shared libraries live on Linux distributions.
var libDirs = []string{"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"}

// findLibs records the interpreter and the libraries a dynamically linked
// helper needs (and theirs), found where the dynamic linker would look.
func (h *Binary) findLibs(f *elf.File) error {
	interp := ""
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			data, err := io.ReadAll(prog.Open())
			if err != nil {
				return err
			}
			interp = strings.TrimRight(string(data), "\x00")
		}
	}
	if interp == "" {
		return nil
	}
	if runtime.GOOS != "linux" {
		return fmt.Errorf("was built for %s", runtime.GOOS)
	}
	h.Loader = filepath.Base(interp)
	h.Libs = map[string]string{h.Loader: interp}
	var need func(*elf.File) error
	need = func(f *elf.File) error {
		names, err := f.ImportedLibraries()
		if err != nil {
			return err
		}
		for _, n := range names {
			if _, ok := h.Libs[n]; ok {
				continue
			}
			found := ""
			for _, d := range libDirs {
				if lf, err := elf.Open(filepath.Join(d, n)); err == nil {
					ok := lf.Machine == f.Machine && lf.Class == f.Class
					if ok {
						found = filepath.Join(d, n)
						err = need(lf)
					}
					lf.Close()
					if err != nil {
						return err
					}
					if ok {
						break
					}
				}
			}
			if found == "" {
				return fmt.Errorf("its library %s was not found", n)
			}
			h.Libs[n] = found
		}
		return nil
	}
	return need(f)
}

// CheckPlatform refuses an image the helper cannot run in.
func (h *Binary) CheckPlatform(image, platform string) error {
	osName, arch, _ := strings.Cut(platform, "/")
	if osName != "" && osName != "linux" {
		return fmt.Errorf("image %s is for %s; Litterbox sandboxes run Linux images", image, platform)
	}
	if arch != "" && h.Arch != "" && arch != h.Arch {
		return fmt.Errorf("image %s is for %s but the sandbox helper %s is for linux/%s; set %s to a static linux/%s litterbox binary (the release archives include one)", image, platform, h.path, h.Arch, Env, arch)
	}
	return nil
}

// Deliver copies the helper into the container's helper volume, with
// docker cp: it works on a container not yet started, with no shell in the
// image, over a remote engine, and on podman.
func (h *Binary) Deliver(ctx context.Context, b box.Box) error {
	f, err := os.Open(h.path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: h.id + "/", Mode: 0o755})
		if err == nil {
			err = tarFile(tw, h.id+"/"+protocol.Name, f, fi.Size())
		}
		if err == nil && len(h.Libs) > 0 {
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: h.id + "/lib/", Mode: 0o755})
			for _, name := range slices.Sorted(maps.Keys(h.Libs)) {
				if err == nil {
					err = tarHostFile(tw, h.id+"/lib/"+name, h.Libs[name])
				}
			}
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	err = b.CopyIn(ctx, protocol.Dir, &runner.NamedReader{Reader: pr, Name: protocol.Name + " " + h.id})
	pr.CloseWithError(tarstream.ErrStopped)
	if err != nil {
		return fmt.Errorf("copying the sandbox helper into %s: %w", b.Name, err)
	}
	return nil
}

func tarFile(tw *tar.Writer, name string, r io.Reader, size int64) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: size}); err != nil {
		return err
	}
	_, err := io.CopyN(tw, r, size)
	return err
}

// tarHostFile adds the file at p (a symlink followed) under name.
func tarHostFile(tw *tar.Writer, name, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return tarFile(tw, name, f, fi.Size())
}

// Pinned is the file at path delivered under id whatever its build,
// for this machine's architecture.
func Pinned(path, id string) *Binary {
	return &Binary{path: path, id: id, Arch: runtime.GOARCH}
}
