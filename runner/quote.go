package runner

import (
	"regexp"
	"strings"
)

var secretKey = regexp.MustCompile(`(?i)(token|secret|password|passwd|api_?key|credential)`)

// ShellLine renders c as one line a human can paste into a POSIX shell to run the
// same command: the working directory as a `cd` prefix, extra environment as
// assignments (secret-looking values masked), and every argument quoted when it
// needs to be.
func ShellLine(c Cmd) string {
	var b strings.Builder
	if c.Dir != "" {
		b.WriteString("cd ")
		b.WriteString(Quote(c.Dir))
		b.WriteString(" && ")
	}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		if secretKey.MatchString(k) {
			v = "***"
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(Quote(v))
		b.WriteByte(' ')
	}
	b.WriteString(Join(c.Argv()))
	return b.String()
}

// Join quotes each argument and joins them with spaces.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// Quote returns s unchanged when the shell would read it back as the same single
// word, and single-quoted otherwise.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !isSafe(r) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isSafe(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("-_./:=,+@%", r)
}
