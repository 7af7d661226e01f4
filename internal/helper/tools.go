//go:build linux

package helper

import (
	"encoding/json"
	"io"
	"os"
	"path"

	"github.com/litterbox-dev/litterbox/internal/helper/search"
	"github.com/litterbox-dev/litterbox/internal/tarstream"
)

// writeTar writes p (a file, symlink or tree) as a tar whose top entry is
// named after p's base name; download reads it.
func writeTar(w io.Writer, p string) error {
	if _, err := os.Lstat(p); err != nil {
		return search.Missing(p)
	}
	return tarstream.TarPath(w, p, path.Base(p), os.Getuid(), os.Getgid())
}

// extractTar extracts a tar whose top entry is named after dest's base name
// so that it becomes dest (upload).
func extractTar(r io.Reader, dest string) error {
	if err := os.MkdirAll(path.Dir(dest), 0o777); err != nil {
		return err
	}
	_, err := tarstream.ExtractTar(r, path.Base(dest), dest)
	return err
}

func printJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}
