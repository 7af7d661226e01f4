package hostrepo

import (
	"regexp"
	"strings"
	"testing"
)

var slugRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Whatever a name holds, ParseName gives a valid slug or an error, and a slug
// parses to itself.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"My Feature Name!@#", "", "a", strings.Repeat("x", 64), "$(rm -rf /)", "../..", "a\x00b", "ü-ñ", "--x--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		slug, err := ParseName(name)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if !slugRE.MatchString(slug) {
			t.Fatalf("ParseName(%q) = %q, not a slug", name, slug)
		}
		if again, err := ParseName(slug); err != nil || again != slug {
			t.Fatalf("slug %q does not parse to itself: %q %v", slug, again, err)
		}
	})
}
