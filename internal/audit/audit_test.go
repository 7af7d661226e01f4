package audit

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/runner"
)

func TestElideArgumentsKeepsSizeAndDigestOfContents(t *testing.T) {
	got := ElideArguments(map[string]any{"sandbox": "box", "path": "a.txt", "content": "hello", "command": "make", "replace_all": true})
	want := map[string]any{"sandbox": "box", "path": "a.txt", "command": "make", "replace_all": true,
		"content": map[string]any{"bytes": 5, "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// Every text an agent chose is cut at agenttext.MaxMessage with its size and digest:
// a 30 MB milestone message does not make a 30 MB audit line.
func TestEntriesAreCapped(t *testing.T) {
	l := Log{Path: filepath.Join(t.TempDir(), "audit.jsonl")}
	huge := strings.Repeat("m", 30<<20)
	e := Entry{Tool: "sandbox-milestone", Arguments: map[string]any{"sandbox": "box", "message": huge, "n": 3},
		Error: huge, Commands: []runner.AuditedCommand{{Line: "sh -c " + huge}}}
	if err := l.Append(e, (&secrets.Resolver{}).Seen()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 4*agenttext.MaxMessage+2048 {
		t.Errorf("the audit line is %d bytes for three 30 MB texts, want under %d", fi.Size(), 4*agenttext.MaxMessage+2048)
	}
	got, err := l.Read("")
	if err != nil || len(got) != 1 {
		t.Fatalf("read back %d entries: %v", len(got), err)
	}
	msg, _ := got[0].Arguments["message"].(map[string]any)
	if msg["bytes"] != float64(30<<20) || len(msg["sha256"].(string)) != 64 || len(msg["head"].(string)) != agenttext.MaxMessage {
		t.Errorf("message recorded as %v bytes, digest %v", msg["bytes"], msg["sha256"])
	}
	if got[0].Arguments["sandbox"] != "box" || got[0].Arguments["n"] != float64(3) {
		t.Errorf("short arguments changed: %v", got[0].Arguments)
	}
	if !strings.Contains(got[0].Commands[0].Line, "(cut: 31457286 bytes in all") || !strings.Contains(got[0].Error, "(cut: ") {
		t.Errorf("command or error not noted as cut")
	}
}
