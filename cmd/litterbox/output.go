package main

import (
	"encoding/json"
	"io"
	"os"

	"golang.org/x/term"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isTerminal reports whether w is a terminal (not merely a character
// device: /dev/null is one too).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func orNone[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// shortID abbreviates a commit id for a message.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
