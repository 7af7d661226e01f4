package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
)

// Error is a config file that cannot be used: where and why.
type Error struct {
	File string // as given to the reader, relative to the repository root
	Line int    // 0 when the problem is not on one line
	Key  string // dotted key, when known
	Msg  string
	Fix  string // what to do, when Msg does not say it
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ", line %d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ", key %s", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(oneLine(e.Msg))
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// syntaxFix is what to do about a line the TOML parser could not read.
const syntaxFix = "the file is TOML (https://toml.io): fix that line; docs/configuration.md lists every key"

// oneLine escapes the control characters the parser quotes back from the
// file ("not a binary number: '0b\n'"), so an error stays one line.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tomlError turns the parser's error into an *Error. Syntax errors and the
// refusals of the value types (UnmarshalTOML) are a toml.ParseError, which
// carries the line and the key. A key that needs quotes ("a b") keeps the
// message it has always had: the whole of the library's text.
func tomlError(name string, data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) && !strings.Contains(pe.LastKey, `"`) {
		e := &Error{File: name, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
		// A file that no TOML reader can read is a syntax error; one that
		// reads as plain TOML had a value refused, which says why itself.
		if _, serr := toml.Decode(string(data), &map[string]any{}); serr != nil {
			e.Fix = syntaxFix
		}
		return e
	}
	// The decoder's own type errors (a string where a number goes, a value
	// where a table goes) are plain fmt errors in the library (MetaData.e,
	// v1.6.0): the line and key are only in the text, so read them back.
	m := decodeLine.FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	return &Error{File: name, Line: line, Key: m[2], Msg: plainTypeError(m[3])}
}

// decodeLine is the text of the decoder's untyped errors when it knows the
// key: "toml: line 2 (last key "docker.image"): incompatible types: ...".
var decodeLine = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

var typeMismatch = regexp.MustCompile(`^incompatible types: TOML value has type (\S+); destination has type (\S+)$`)

func plainTypeError(msg string) string {
	m := typeMismatch.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	return "want " + typeWord(m[2]) + ", got " + typeWord(m[1])
}

func typeWord(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), t == "integer":
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool", t == "boolean":
		return "true or false"
	case strings.HasPrefix(t, "map"):
		return "a table"
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "slice"):
		return "an array"
	}
	return t
}
