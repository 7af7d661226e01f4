package cli

import (
	"encoding/json"
	"io"
	"os"

	"golang.org/x/term"
)

func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// IsTerminal reports whether w is a terminal (not merely a character
// device: /dev/null is one too).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// TerminalWidth is w's width in columns when it is a terminal, else 80.
func TerminalWidth(w any) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

func OrNone[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ShortID abbreviates a commit id for a message.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
