// Package relpath answers questions about slash-separated paths relative
// to the sandbox's /src: whether one lies under a directory, or under a
// directory that scans leave out.
package relpath

import "strings"

// under reports whether p is dir or inside it; "" is the root.
func Under(p, dir string) bool {
	return dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

func UnderAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if Under(p, d) {
			return true
		}
	}
	return false
}

func Pruned(p string, pruned map[string]bool) bool {
	for d := range pruned {
		if Under(p, d) && d != "" {
			return true
		}
	}
	return false
}
