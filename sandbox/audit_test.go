package sandbox

import (
	"reflect"
	"testing"
)

func TestElideArgumentsKeepsSizeAndDigestOfContents(t *testing.T) {
	got := ElideArguments(map[string]any{"sandbox": "box", "path": "a.txt", "content": "hello", "command": "make", "replace_all": true})
	want := map[string]any{"sandbox": "box", "path": "a.txt", "command": "make", "replace_all": true,
		"content": map[string]any{"bytes": 5, "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}
