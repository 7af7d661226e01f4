package mcpclients

import (
	"bytes"
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

// The rules a client reads from a JSON file are described as a want: what
// the file must hold, merged in with the same care as the server entry. A
// member or element the user already has is never removed, reordered or
// changed; what is missing is appended after it, indented like its
// neighbours. A value that contradicts the rule is left as it is and
// reported, because the user may have set it on purpose.
type want interface{ render() any }

// wantObj is a JSON object holding at least these members, in this order
// when they are added.
type wantObj []wantMember

type wantMember struct {
	key string
	val want
}

// wantRules is an OpenCode permission rule: an object of pattern: action,
// where a plain action string stands for {"*": action} (so a string the
// user wrote is turned into that object before patterns are added to it).
type wantRules wantObj

// wantSet is a JSON array holding at least these strings.
type wantSet []string

// wantVal is a member that must equal v; unless says what follows when the
// user's value differs (it is kept).
type wantVal struct {
	v      any
	unless string
}

func (w wantObj) render() any {
	o := make(orderedEntry, len(w))
	for i, m := range w {
		o[i].k, o[i].v = m.key, m.val.render()
	}
	return o
}
func (w wantRules) render() any { return wantObj(w).render() }
func (w wantSet) render() any   { return []string(w) }
func (w wantVal) render() any   { return w.v }

// jsonEdit is one pass of rules over one file: its name, for notes, and
// what it found that contradicts the rules.
type jsonEdit struct {
	file      string
	conflicts []string
}

// mergeJSONRules makes content (JSON or JWCC; empty for a new file) hold w,
// keeping every comment and the user's own values. It reports the
// conflicts it left alone.
func mergeJSONRules(content []byte, file string, w wantObj) ([]byte, []string, error) {
	if len(bytes.TrimSpace(content)) == 0 {
		content = []byte("{}\n")
	}
	v, err := hujson.Parse(content)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot merge into it: %v", err)
	}
	top, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, nil, errors.New("cannot merge into it: not a JSON object")
	}
	e := &jsonEdit{file: file}
	if err := e.object(top, "\n", "", w); err != nil {
		return nil, nil, err
	}
	out := v.Pack()
	if _, err := hujson.Standardize(append([]byte(nil), out...)); err != nil {
		return nil, nil, fmt.Errorf("merging left it unreadable (%v); edit it by hand", err)
	}
	return out, e.conflicts, nil
}

// object makes obj (whose closing brace is indented by outer, at JSON
// path) hold the members of w.
func (e *jsonEdit) object(obj *hujson.Object, outer, path string, w wantObj) error {
	for _, m := range w {
		at := joinPath(path, m.key)
		existing := member(obj, m.key)
		if existing == nil {
			if err := addMember(obj, outer, m.key, m.val.render()); err != nil {
				return err
			}
			continue
		}
		if err := e.value(&existing.Value, memberOuter(obj, outer, existing), at, m.val); err != nil {
			return err
		}
	}
	return nil
}

// value makes the user's value v at path agree with w, adding to it
// where it can and noting a conflict where it cannot.
func (e *jsonEdit) value(v *hujson.Value, outer, path string, w want) error {
	switch w := w.(type) {
	case wantObj:
		if obj, ok := v.Value.(*hujson.Object); ok {
			return e.object(obj, outer, path, w)
		}
		e.conflict(path, v, "an object", "")
	case wantRules:
		if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == '"' {
			// {"read": "allow"} means {"read": {"*": "allow"}}: writing
			// it out keeps the user's rule first and lets ours follow.
			v.Value = &hujson.Object{Members: []hujson.ObjectMember{{
				Name:  hujson.Value{BeforeExtra: hujson.Extra(outer + "  "), Value: hujson.String("*")},
				Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: lit},
			}}, AfterExtra: hujson.Extra(outer)}
		}
		if obj, ok := v.Value.(*hujson.Object); ok {
			return e.object(obj, outer, path, wantObj(w))
		}
		e.conflict(path, v, "an object", "")
	case wantSet:
		if arr, ok := v.Value.(*hujson.Array); ok {
			for _, s := range w {
				if !hasString(arr, s) {
					appendElement(arr, outer, hujson.String(s))
				}
			}
			return nil
		}
		e.conflict(path, v, "an array", "")
	case wantVal:
		want, err := json.Marshal(w.v)
		if err != nil {
			return err
		}
		std := v.Clone()
		std.Standardize()
		if sameJSON(std.Pack(), want) {
			return nil
		}
		e.conflict(path, v, string(want), w.unless)
	}
	return nil
}

// conflict records that path holds something other than need, which is
// left as it is, and what follows from that.
func (e *jsonEdit) conflict(path string, v *hujson.Value, need, unless string) {
	std := v.Clone()
	std.Standardize()
	var b bytes.Buffer
	if json.Compact(&b, std.Pack()) != nil {
		b.Write(std.Pack())
	}
	got := strings.TrimSpace(b.String())
	if len(got) > 60 {
		got = got[:57] + "..."
	}
	msg := fmt.Sprintf("%s: %s is %s, not %s; left as it is", e.file, path, got, need)
	if unless != "" {
		msg += ", so " + unless
	}
	e.conflicts = append(e.conflicts, msg)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// memberOuter is the indentation of m's line in obj (the line its value's
// closing bracket goes on), or one level deeper than outer when obj is on
// one line.
func memberOuter(obj *hujson.Object, outer string, m *hujson.ObjectMember) string {
	ws := string(m.Name.BeforeExtra)
	if i := strings.LastIndexByte(ws, '\n'); i >= 0 && strings.TrimSpace(ws[i:]) == "" {
		return ws[i:]
	}
	return memberIndent(obj, outer+"  ")
}

// addMember appends key: value to obj, pretty-printed at the indentation
// of obj's members, or compact when obj is written on one line.
func addMember(obj *hujson.Object, outer, key string, value any) error {
	indent, closing := memberIndent(obj, outer+"  "), outer
	text, err := json.MarshalIndent(value, strings.TrimLeft(indent, "\r\n"), "  ")
	if oneLine(obj) {
		indent, closing = " ", string(obj.AfterExtra)
		text, err = json.Marshal(value)
	}
	if err != nil {
		return err
	}
	pv, err := hujson.Parse(text)
	if err != nil {
		return err
	}
	appendMember(obj, key, indent, closing, pv.Value)
	return nil
}

// oneLine reports whether obj has members and no line break among them.
func oneLine(obj *hujson.Object) bool {
	if len(obj.Members) == 0 || bytes.Contains(obj.AfterExtra, []byte("\n")) {
		return false
	}
	for _, m := range obj.Members {
		if bytes.Contains(m.Name.BeforeExtra, []byte("\n")) {
			return false
		}
	}
	return true
}

// appendElement adds value as arr's last element, on a line of its own
// like the others (or on the same line when the array is on one line).
func appendElement(arr *hujson.Array, outer string, value hujson.ValueTrimmed) {
	indent := outer + "  "
	if len(arr.Elements) > 0 {
		indent = " "
		if ws := string(arr.Elements[0].BeforeExtra); strings.Contains(ws, "\n") {
			indent = ws[strings.LastIndexByte(ws, '\n'):]
		}
	}
	after := string(arr.AfterExtra)
	sameLine, rest := after, outer
	if i := strings.IndexByte(after, '\n'); i >= 0 {
		sameLine, rest = after[:i], after[i:]
	} else if len(arr.Elements) > 0 {
		// A one-line array keeps its closing bracket where it was.
		sameLine, rest = "", after
	}
	arr.Elements = append(arr.Elements, hujson.Value{BeforeExtra: hujson.Extra(strings.TrimRight(sameLine, " \t") + indent), Value: value})
	arr.AfterExtra = hujson.Extra(rest)
}

// hasString reports whether arr holds the string s.
func hasString(arr *hujson.Array, s string) bool {
	for _, e := range arr.Elements {
		if lit, ok := e.Value.(hujson.Literal); ok && lit.Kind() == '"' && lit.String() == s {
			return true
		}
	}
	return false
}
