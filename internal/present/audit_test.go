package present

import (
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

func TestAuditLine(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 15, 4, 0, time.Local)
	zero, three := 0, 3
	cases := []struct {
		name string
		e    audit.Entry
		want string
	}{
		{"bash", audit.Entry{Time: at, Sandbox: "fix-login", Tool: "bash", Arguments: map[string]any{"sandbox": "fix-login", "command": "go test ./..."}, Status: "ok", DurationMS: 2140, ExitCode: &zero, Snapshot: "1a2b3c4d5e6f"},
			"11-28 09:15:04 fix-login    bash               2.1s exit 0   1a2b3c4d go test ./..."},
		{"write", audit.Entry{Time: at, Sandbox: "a", Tool: "write", Arguments: map[string]any{"path": "src/app.py", "content": map[string]any{"bytes": 5}}, Status: "ok", DurationMS: 84, Snapshot: "ffff0000aaaa"},
			"11-28 09:15:04 a            write              84ms ok       ffff0000 src/app.py"},
		{"error", audit.Entry{Time: at, Sandbox: "a", Tool: "read", Arguments: map[string]any{"path": "gone.txt"}, Status: "error", Error: "read gone.txt: no such file\nmore", DurationMS: 12},
			"11-28 09:15:04 a            read               12ms error    -        gone.txt; error: read gone.txt: no such file"},
		{"run started", audit.Entry{Time: at, Sandbox: "w", Tool: "run", Arguments: map[string]any{"command": "claude"}, Status: "started"},
			"11-28 09:15:04 w            run                 0ms started  -        claude"},
		{"run ended", audit.Entry{Time: at, Sandbox: "w", Tool: "run", Arguments: map[string]any{"command": "claude"}, Status: "ok", DurationMS: 754000, ExitCode: &three, Commits: []string{"aaaaaaaa11", "bbbbbbbb22"},
			Injected: map[string]int{"KEY@api.test": 4}, Refused: map[string]int{"x.test:80": 1}},
			"11-28 09:15:04 w            run                 13m exit 3   bbbbbbbb claude; 1 refused by the egress proxy (x.test:80); 4 injected (KEY@api.test)"},
		// What an agent chose cannot draw on the terminal or take more than
		// its line; a long sandbox name is cut in its column.
		{"hostile", audit.Entry{Time: at, Sandbox: "a-very-long-sandbox-name", Tool: "bash", Arguments: map[string]any{"command": "printf '\x1b]52;c;cHdu\x07'" + strings.Repeat("x", 500)}, Status: "ok", DurationMS: 95000},
			"11-28 09:15:04 a-ve...name  bash                95s ok       -        printf '\\x1b]52;c;cHdu\\x07'" + strings.Repeat("x", 79) + "..." + strings.Repeat("x", 100)},
	}
	for _, c := range cases {
		if got := AuditLine(c.e); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestAuditHeaderAndRunning(t *testing.T) {
	if AuditHeader != "TIME           SANDBOX      TOOL               TOOK RESULT   COMMIT   CALL" {
		t.Errorf("header %q", AuditHeader)
	}
	h := layout.Holder{Call: "bash: make test", Since: time.Date(2026, 11, 28, 9, 15, 4, 0, time.Local)}
	if got := AuditRunning("box", h); got != "11-28 09:15:04 box          bash                    running  -        make test" {
		t.Errorf("running: %q", got)
	}
}
