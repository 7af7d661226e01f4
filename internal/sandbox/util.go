package sandbox

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// shown is a name from a sandbox as it is safe to print: quoted, with
// escapes, when it holds anything a terminal would act on.
func shown(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return s
}
