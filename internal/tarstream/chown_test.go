package tarstream

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

func TestChownRewritesOwnersAndStreamsContent(t *testing.T) {
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "abc"}})
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "d/", Mode: 0o755, Uid: 0, Gid: 0, Uname: "root"})
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "d/run.sh", Mode: 0o755, Size: 5, Uid: 42, Gid: 42})
	_, _ = tw.Write([]byte("hello"))
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "link", Linkname: "d/run.sh"})
	_ = tw.Close()
	in.Write(make([]byte, 10240)) // record padding after the end marker, as git writes it

	var out bytes.Buffer
	if err := Chown(&out, &in, 1000, 1001, nil); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&out)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 1000 || h.Gid != 1001 || h.Uname != "" {
			t.Errorf("%s owned by %d:%d (%s)", h.Name, h.Uid, h.Gid, h.Uname)
		}
		if h.Name == "d/run.sh" {
			body, _ := io.ReadAll(tr)
			if string(body) != "hello" || h.Mode != 0o755 {
				t.Errorf("run.sh: %q mode %o", body, h.Mode)
			}
		}
		if h.Name == "link" && h.Linkname != "d/run.sh" {
			t.Errorf("symlink target %q", h.Linkname)
		}
	}
	if strings.Join(names, ",") != "d/,d/run.sh,link" {
		t.Errorf("entries %v (global header must be dropped)", names)
	}
}

func TestChownRejectsGarbage(t *testing.T) {
	if err := Chown(io.Discard, strings.NewReader(strings.Repeat("x", 1024)), 1, 1, nil); err == nil {
		t.Error("garbage input accepted")
	}
}

// Chown rewrites the owner of every entry of any tar it accepts, and keeps
// names and contents.
func FuzzChown(f *testing.F) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	_ = tw.WriteHeader(&tar.Header{Name: "a.txt", Mode: 0o644, Size: 2, Uid: 0, Gid: 0})
	_, _ = tw.Write([]byte("hi"))
	_ = tw.WriteHeader(&tar.Header{Name: "dir/.gitignore", Mode: 0o644, Size: 4})
	_, _ = tw.Write([]byte("*.o\n"))
	_ = tw.Close()
	f.Add(b.Bytes())
	f.Add([]byte("garbage"))
	// What git archive really writes: a pax global header first.
	real, err := os.ReadFile("testdata/git-archive.tar")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		if err := Chown(&out, bytes.NewReader(data), 1000, 1000, func(string, []byte) error { return nil }); err != nil {
			return
		}
		in, got := tar.NewReader(bytes.NewReader(data)), tar.NewReader(&out)
		for {
			hi, err := in.Next()
			if err != nil {
				return
			}
			if hi.Typeflag == tar.TypeXGlobalHeader {
				continue // dropped on purpose: its records are git's, not the sandbox's
			}
			ho, err := got.Next()
			if err != nil {
				t.Fatalf("output lost entry %q: %v", hi.Name, err)
			}
			if ho.Name != hi.Name || ho.Uid != 1000 || ho.Gid != 1000 {
				t.Fatalf("entry %q -> %q uid %d gid %d", hi.Name, ho.Name, ho.Uid, ho.Gid)
			}
		}
	})
}
