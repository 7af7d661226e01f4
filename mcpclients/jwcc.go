package mcpclients

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// mergeJWCC is mergeJSON for a file with comments or trailing commas (JSON
// With Commas and Comments, as Zed, VS Code and OpenCode read it): the
// entry is added or replaced in the syntax tree, and every comment stays
// where it was. The entry itself is indented like its neighbours.
func mergeJWCC(content []byte, section, name string, entry any) ([]byte, bool, error) {
	v, err := hujson.Parse(content)
	if err != nil {
		return nil, false, fmt.Errorf("cannot merge into it: %v", err)
	}
	top, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, false, errors.New("cannot merge into it: not a JSON object")
	}
	want, err := json.Marshal(entry)
	if err != nil {
		return nil, false, err
	}
	sec := member(top, section)
	if sec == nil {
		sec = appendMember(top, section, memberIndent(top, "\n  "), "\n", &hujson.Object{})
	}
	servers, ok := sec.Value.Value.(*hujson.Object)
	if !ok {
		return nil, false, fmt.Errorf("%q is not a JSON object; edit it by hand", section)
	}
	if old := member(servers, name); old != nil {
		std := old.Value.Clone()
		std.Standardize()
		if sameJSON(std.Pack(), want) {
			return content, false, nil
		}
	}
	indent := memberIndent(servers, indentOf(top, section)+"  ")
	pretty, err := json.MarshalIndent(entry, strings.TrimLeft(indent, "\r\n"), "  ")
	if err != nil {
		return nil, false, err
	}
	pv, err := hujson.Parse(pretty)
	if err != nil {
		return nil, false, err
	}
	if m := member(servers, name); m != nil {
		m.Value.Value = pv.Value
	} else {
		appendMember(servers, name, indent, indentOf(top, section), pv.Value)
	}
	return v.Pack(), true, nil
}

// member is obj's member named key, or nil.
func member(obj *hujson.Object, key string) *hujson.ObjectMember {
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == key {
			return &obj.Members[i]
		}
	}
	return nil
}

// appendMember adds key: value as obj's last member, on a line of its own
// indented by indent. A comment on the line of the member before it stays
// on that line; closing is the whitespace before the closing brace when
// obj has none of its own (it was empty or on one line).
func appendMember(obj *hujson.Object, key, indent, closing string, value hujson.ValueTrimmed) *hujson.ObjectMember {
	after := string(obj.AfterExtra)
	sameLine, rest := after, closing
	if i := strings.IndexByte(after, '\n'); i >= 0 {
		sameLine, rest = after[:i], after[i:]
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: hujson.Extra(strings.TrimRight(sameLine, " \t") + indent), Value: hujson.String(key)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: value},
	})
	obj.AfterExtra = hujson.Extra(rest)
	return &obj.Members[len(obj.Members)-1]
}

// memberIndent is the whitespace before the members of obj (taken from
// the first that has a line of its own and no comment before it), or def.
func memberIndent(obj *hujson.Object, def string) string {
	for _, m := range obj.Members {
		if ws := string(m.Name.BeforeExtra); strings.Contains(ws, "\n") && strings.TrimSpace(ws) == "" {
			return ws[strings.LastIndexByte(ws, '\n'):]
		}
	}
	return def
}

// indentOf is the line break and indentation before obj's member key.
func indentOf(obj *hujson.Object, key string) string {
	if m := member(obj, key); m != nil {
		ws := string(m.Name.BeforeExtra)
		if i := strings.LastIndexByte(ws, '\n'); i >= 0 {
			return ws[i:]
		}
	}
	return "\n"
}
