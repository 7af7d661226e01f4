package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// A key the reader does not know is an error, not a silence: a typo such
// as [dokcer] would otherwise leave the sandbox on a setting the user
// believes it does not have.

// schemaNode is one table of fileConfig: its keys, each a sub-table or a
// value; any means the keys are names the user picks (env, services).
type schemaNode struct {
	keys map[string]*schemaNode // nil value: a plain value
	any  *schemaNode            // set for maps: every key is valid, with this shape
}

var schema = nodeOf(reflect.TypeOf(fileConfig{}))

func nodeOf(t reflect.Type) *schemaNode {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		n := &schemaNode{keys: map[string]*schemaNode{}}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			n.keys[name] = nodeOf(f.Type)
		}
		return n
	case reflect.Map:
		return &schemaNode{any: nodeOf(t.Elem())}
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct {
			return nodeOf(e) // an array of tables: [[ports]]
		}
	}
	return nil
}

// child is the node of key under n, and whether n has it.
func (n *schemaNode) child(key string) (*schemaNode, bool) {
	if n == nil {
		return nil, false
	}
	if n.any != nil {
		return n.any, true
	}
	c, ok := n.keys[key]
	return c, ok
}

// unknownKey returns an *Error for the first key of the file the schema
// does not have, or nil.
func unknownKey(name string, data []byte, md toml.MetaData) error {
	for _, k := range md.Undecoded() {
		n, parent := schema, toml.Key{}
		for i, part := range k {
			c, ok := n.child(part)
			if !ok {
				return unknownError(name, data, md, append(parent, part), k, n)
			}
			if c == nil && i < len(k)-1 {
				break // a value that takes a table of its own (custom types)
			}
			n, parent = c, append(parent, part)
		}
	}
	return nil
}

// unknownError is the error for key, which the schema does not have under
// parent; written is the key of the file that reached it.
func unknownError(name string, data []byte, md toml.MetaData, key, written toml.Key, parent *schemaNode) error {
	last := key[len(key)-1]
	what := "key " + last
	if md.Type(key...) == "Hash" || md.Type(key...) == "ArrayHash" {
		what = "table [" + key.String() + "]"
	}
	where := ""
	if len(key) > 1 {
		where = " in [" + key[:len(key)-1].String() + "]"
	}
	msg := fmt.Sprintf("unknown %s%s", what, where)
	switch hint := suggest(key, parent); {
	case hint != "":
		msg += "; " + hint
	case parent != nil && len(parent.keys) > 0:
		msg += "; known: " + strings.Join(slices.Sorted(maps.Keys(parent.keys)), ", ")
	}
	line := keyLine(data, key)
	if line == 0 { // a table with no header of its own: where its first key is
		line = keyLine(data, written)
	}
	return &Error{File: name, Line: line, Msg: msg}
}

// suggest names where the key was probably meant to go: the same name in
// another table, or the nearest name in this one.
func suggest(key toml.Key, parent *schemaNode) string {
	last := key[len(key)-1]
	for _, table := range slices.Sorted(maps.Keys(schema.keys)) {
		t := schema.keys[table]
		if _, ok := t.keys[last]; ok && t.any == nil && (len(key) < 2 || key[len(key)-2] != table) {
			return fmt.Sprintf("%s belongs in [%s]", last, table)
		}
	}
	if parent == nil {
		return ""
	}
	best, bestD := "", 1<<30
	for _, k := range slices.Sorted(maps.Keys(parent.keys)) {
		if d := EditDistance(last, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > max(2, len(last)/3) {
		return ""
	}
	if len(key) == 1 && parent.keys[best] != nil {
		return "did you mean [" + best + "]?"
	}
	return "did you mean " + best + "?"
}

// EditDistance is the Levenshtein distance between a and b, by bytes.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// keyLine is the line the parser saw key on: its table's header, or where
// it is assigned. MetaData keeps positions to itself, but the library puts
// them in the error of a value that refuses to decode, so the key's value
// is decoded once more into a type that refuses everything. Of the entries
// of an array of tables the parser keeps the last one's position, and a
// table made only by dotted keys or a deeper header has none (0).
func keyLine(data []byte, key toml.Key) int {
	var top map[string]toml.Primitive
	md, err := toml.Decode(string(data), &top)
	if err != nil {
		return 0
	}
	v, ok := top[key[0]]
	for _, part := range key[1:] {
		if !ok {
			return 0
		}
		v, ok = member(&md, v, part)
	}
	var pe toml.ParseError
	if !ok || !errors.As(md.PrimitiveDecode(v, &refuse{}), &pe) {
		return 0
	}
	return pe.Position.Line
}

// member is name's value in the table v, or in the first entry of the
// array of tables v that has it.
func member(md *toml.MetaData, v toml.Primitive, name string) (toml.Primitive, bool) {
	// A value that is not a table decodes into a map without an error, but
	// leaves it nil.
	var table map[string]toml.Primitive
	if md.PrimitiveDecode(v, &table) == nil && table != nil {
		c, ok := table[name]
		return c, ok
	}
	var tables []map[string]toml.Primitive
	if md.PrimitiveDecode(v, &tables) == nil {
		for _, t := range tables {
			if c, ok := t[name]; ok {
				return c, true
			}
		}
	}
	return toml.Primitive{}, false
}

// refuse is a value that will not decode, for keyLine.
type refuse struct{}

func (*refuse) UnmarshalTOML(any) error { return errors.New("refused") }
