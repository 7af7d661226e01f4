// Package agenttext is how Litterbox keeps text an agent chose (a
// command, a message, a path, an error it provoked) before a human reads
// it: bounded in size, cut on whole characters, and inert on a terminal.
package agenttext

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxMessage bounds what a commit message or an audit entry keeps of one
// text an agent sent: a command, a milestone message, a pattern.
const MaxMessage = 4 << 10

// Cap is s, or its first max bytes ending on a whole character.
func Cap(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// CapNoted is s, or its head of MaxMessage bytes with a note of its size
// and SHA-256.
func CapNoted(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return Cap(s, MaxMessage) + fmt.Sprintf(" ...(cut: %d bytes in all, sha256 %s)", len(s), hex.EncodeToString(sum[:]))
}

// Inert is s as it is safe to print on a terminal: newlines and tabs
// kept, every other character a terminal would act on (C0 and C1
// controls, DEL, bytes that are not UTF-8 such as a lone 0x9b, an 8-bit
// CSI) and the bidirectional controls that reorder what is shown written
// out as a \xNN or \uNNNN escape.
func Inert(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t' || !unicode.IsControl(r) && !unicode.Is(unicode.Bidi_Control, r):
			b.WriteString(s[i : i+n])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// Shown is a name from a sandbox as it is safe to print: quoted, with
// escapes, when it holds anything a terminal would act on.
func Shown(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return s
}

// FirstLine is s's first line, trimmed.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Elide is s, or its head and tail around "..." in about n bytes, cut on
// whole characters.
func Elide(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := s[:n/2], s[len(s)-n/2:]
	for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + "..." + tail
}

// Thousands is n in decimal with its thousands separated by commas, as a
// person reads a byte count: 1,726,771.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
		s = s[1:]
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
