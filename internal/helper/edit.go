//go:build linux

package helper

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helper/search"
	"github.com/litterbox-dev/litterbox/internal/textedit"
)

// editFile applies the edits content carries to the file at p, all or
// none: the file read as the cat tool reads it, the edits applied as the
// host would, the result written as a write writes it. Where it stops is
// res.ExitCode (protocol.Edit*), why res.Err. A content that is no list
// of edits is the host's fault: an error.
func editFile(p string, content io.Reader, res *protocol.Result) error {
	raw, err := io.ReadAll(content)
	if err != nil {
		return err
	}
	eds, err := protocol.DecodeEdits(raw)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := search.Cat(&buf, p, int64(min(eds.Max, 1<<62))); err != nil {
		res.ExitCode, res.Err = protocol.EditReadFailed, err.Error()
		var te *protocol.ToolError
		if errors.As(err, &te) && te.Code == protocol.ExitMissing {
			res.ExitCode = protocol.EditMissing
		}
		return nil
	}
	ops := make([]textedit.Op, len(eds.List))
	for i, e := range eds.List {
		ops[i] = textedit.Op{Old: e.Old, New: e.New, ReplaceAll: e.All}
	}
	updated, n, err := textedit.Apply(buf.String(), ops)
	if err != nil {
		res.ExitCode, res.Err = protocol.EditRefused, err.Error()
		var miss *textedit.MissError
		if errors.As(err, &miss) {
			res.ExitCode = protocol.EditMissed
		}
		return nil
	}
	if uint64(len(updated)) > eds.MaxOut {
		res.ExitCode, res.Replaced = protocol.EditOverMax, uint64(len(updated))
		res.Err = "the edited file is " + strconv.Itoa(len(updated)) + " bytes, over max-file-size"
		return nil
	}
	if err := writeFile(p, strings.NewReader(updated)); err != nil {
		res.ExitCode, res.Err = protocol.EditWriteFailed, err.Error()
		return nil
	}
	res.Replaced = uint64(n)
	return nil
}
