// Package slug makes the names Litterbox gives sandboxes and projects:
// lowercase, every run of characters outside [a-z0-9] one "-", trimmed of
// "-" at both ends, 1-63 characters (a DNS label, so it can be a hostname).
package slug

import "strings"

// MaxLen is the longest slug allowed.
const MaxLen = 63

// Make turns name into its slug, which may be empty or too long.
func Make(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}

// Valid reports whether s is a slug already: its own slug, 1-63 characters.
func Valid(s string) bool {
	return s != "" && len(s) <= MaxLen && Make(s) == s
}
