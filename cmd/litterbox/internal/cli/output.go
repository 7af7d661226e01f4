package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
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

// Plural is one for a count of 1, many for any other.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// PrintLeftAlone names what a delete did not touch because another
// repository owns it.
func PrintLeftAlone(e *Env, d *sandbox.Deleted) {
	for _, l := range d.LeftAlone {
		fmt.Fprintf(e.Stdout, "Left alone: %s.\n", l)
	}
}

// ShortIDs lists commit ids shortened, the first and last of a long list.
func ShortIDs(ids []string) string {
	short := make([]string, len(ids))
	for i, id := range ids {
		short[i] = hostrepo.ShortID(id)
	}
	if len(short) > 4 {
		return short[0] + " ... " + short[len(short)-1]
	}
	return strings.Join(short, " ")
}

// Since renders a duration as list's ages do: 45s, 12m, 5h, 3d.
func Since(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
