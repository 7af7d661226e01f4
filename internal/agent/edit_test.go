package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/textedit"
)

// An edit the helper stopped is reported as the read and the write that
// made it before reported theirs: the missing file as ErrNoSuchFile, a
// missed old_string whole with its lines, the size over max-file-size.
func TestEditErrors(t *testing.T) {
	miss := "edit 1 of 1: old_string not found; the closest lines are:\n     3\tfunc main() {}"
	for _, c := range []struct {
		res  result.Act
		want string
	}{
		{result.Act{}, ""},
		{result.Act{ExitCode: protocol.EditMissing, Stderr: "/src/a.go: no such file or directory\n"}, "a.go: no such file"},
		{result.Act{ExitCode: protocol.EditReadFailed, Stderr: "/src/a.go: file larger than 5 bytes\n"}, "/src/a.go: file larger than 5 bytes"},
		{result.Act{ExitCode: protocol.EditMissed, Stderr: miss + "\n"}, "a.go: " + miss},
		{result.Act{ExitCode: protocol.EditRefused, Stderr: "edit 1 of 1: old_string occurs 2 times (at lines 1, 4); give more context\n"}, "a.go: edit 1 of 1: old_string occurs 2 times (at lines 1, 4); give more context"},
		{result.Act{ExitCode: protocol.EditOverMax, Replaced: 2048, Stderr: "***\n"}, "content is 2.0 KiB, over max-file-size (1k)"},
		{result.Act{ExitCode: protocol.EditWriteFailed, Stderr: "open /src/a.go: permission denied\n"}, "writing a.go: open /src/a.go: permission denied"},
	} {
		err := editError("/src/a.go", "a.go", &c.res, 1024)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("exit %d: %v, want none", c.res.ExitCode, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("exit %d: %v, want %q", c.res.ExitCode, err, c.want)
		}
		var m *textedit.MissError
		if errors.As(err, &m) != (c.res.ExitCode == protocol.EditMissed) {
			t.Errorf("exit %d: %v is a miss: %v", c.res.ExitCode, err, errors.As(err, &m))
		}
		if errors.Is(err, ErrNoSuchFile) != (c.res.ExitCode == protocol.EditMissing) {
			t.Errorf("exit %d: %v is ErrNoSuchFile: %v", c.res.ExitCode, err, errors.Is(err, ErrNoSuchFile))
		}
	}
}
