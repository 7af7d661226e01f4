package devcontainer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// decode reads data as JSON with comments and trailing commas, which is
// what editors accept in devcontainer.json, into plain Go values: objects
// as map[string]any, numbers as json.Number (so a port of 3.5 is caught
// rather than truncated).
func decode(name string, data []byte) (map[string]any, error) {
	// Standardize blanks comments in place, and the caller's bytes are not
	// ours to change. Editors on Windows may save a byte order mark.
	data = bytes.TrimPrefix(bytes.Clone(data), []byte("\ufeff"))
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, syntaxError(name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %v", name, err)
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a JSON object, got %s", name, describe(top))
	}
	return obj, nil
}

// syntaxError turns hujson's "hujson: line L, column C: reason" into one
// line that starts with the file name and gives the line, which is what a
// person needs to find the mistake.
func syntaxError(name string, err error) error {
	var line, col int
	if _, scanErr := fmt.Sscanf(err.Error(), "hujson: line %d, column %d:", &line, &col); scanErr == nil {
		if inner := errors.Unwrap(err); inner != nil {
			return fmt.Errorf("%s: line %d: invalid JSON: %s", name, line, cut(oneLine(inner.Error()), 100))
		}
	}
	return fmt.Errorf("%s: invalid JSON: %s", name, cut(oneLine(err.Error()), 100))
}

// oneLine escapes line breaks: the text of a repository file goes into
// errors and Ignored, which are printed one line each.
func oneLine(s string) string {
	return lineBreaks.Replace(s)
}

var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)

// cut shortens s to about n bytes: an unterminated string would otherwise
// put the rest of the file in the message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

// describe names a JSON value in an error: literals as written, strings
// quoted (cut short, an error is one line), containers by kind.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return v.String()
	case string:
		return strconv.Quote(cut(v, 40))
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// child is the path of key inside the value at parent, written the way
// a person would type it: containerEnv.GOPATH, postCreateCommand["a b"].
func child(parent, key string) string {
	if !plainKey(key) {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func index(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

func plainKey(key string) bool {
	if key == "" || key[0] >= '0' && key[0] <= '9' {
		return false
	}
	return strings.IndexFunc(key, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

// isEmpty reports whether v asks for nothing, so that naming it in Ignored
// would only be noise ("mounts": [] is not a mount Litterbox skipped).
func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(v) == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}
