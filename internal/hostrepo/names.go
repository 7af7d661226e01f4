package hostrepo

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/slug"
)

// MaxSlugLen is the longest slug allowed (a DNS label, so it can be a hostname).
const MaxSlugLen = slug.MaxLen

// Slugify lowercases name, turns every run of characters outside [a-z0-9] into
// one "-", and trims "-" at both ends.
func Slugify(name string) string { return slug.Make(name) }

// InvalidNameError reports a name whose slug is empty or too long, or a
// name that is a path.
type InvalidNameError struct {
	Name string
	// Path: the name is a path ("../../etc"), whose slug (Slug) would
	// silently name another sandbox than the one meant.
	Path bool
	Slug string
}

func (e *InvalidNameError) Error() string {
	if e.Path {
		return fmt.Sprintf("invalid sandbox name %q: it is a path, not a name (it would become '%s'); name the sandbox with letters, digits and dashes", e.Name, e.Slug)
	}
	return fmt.Sprintf("invalid sandbox name %q: slugified names must be 1-%d characters and contain only [a-z0-9-]", e.Name, MaxSlugLen)
}

// ParseName slugifies name and validates the result. A name that is a
// path (it starts with "/", "~" or "./", or has a "." or ".." part) is
// refused rather than slugified, since its slug is not what was meant.
func ParseName(name string) (string, error) {
	s := Slugify(name)
	if isPath(name) {
		return "", &InvalidNameError{Name: name, Path: true, Slug: s}
	}
	if len(s) == 0 || len(s) > MaxSlugLen {
		return "", &InvalidNameError{Name: name}
	}
	return s, nil
}

func isPath(name string) bool {
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, "~") {
		return true
	}
	for _, part := range strings.Split(name, "/") {
		if part == "." || part == ".." {
			return true
		}
	}
	return false
}

// Names are the resources one sandbox owns.
type Names struct {
	Slug      string
	Branch    string // short branch name, litterbox/<slug>
	Ref       string // refs/heads/litterbox/<slug>
	Container string
	Volume    string
	// Pool is the warm pool entry the container was claimed from, "" for
	// one made for this sandbox: its volumes kept the entry's names, and
	// its environment lacks the sandbox's name.
	Pool string
	// ID is the container's id as its making returned it (the record's),
	// "" when not known: CallBox then addresses the box by its name.
	ID string
}

// NamesFor derives every resource name from the repository's slug and id
// and the sandbox's slug. The id keeps two repositories with one basename or
// one committed [project] slug apart on one engine.
func NamesFor(repoSlug, repoID, slug string) Names {
	c := "litterbox-" + repoSlug + "-" + repoID + "-" + slug
	return Names{
		Slug:      slug,
		Branch:    "litterbox/" + slug,
		Ref:       "refs/heads/litterbox/" + slug,
		Container: c,
		Volume:    c + "-src",
	}
}

// RepoSlug is the slug of a repository root's basename, "repo" if that has no
// usable characters.
func RepoSlug(base string) string {
	s := Slugify(base)
	if s == "" {
		return "repo"
	}
	if len(s) > MaxSlugLen {
		s = strings.TrimRight(s[:MaxSlugLen], "-")
	}
	return s
}

// ParseNameExact reports whether s is already a valid slug.
func ParseNameExact(s string) bool { return slug.Valid(s) }

// Egress is the name of the sandbox's egress proxy container, and of the
// volume of its socket. A slug has no '.', so no sandbox's names meet it.
func (n Names) Egress() string { return n.Container + ".egress" }

// RoleCopy is the dev.litterbox.managed label of a short-lived container
// that copies one volume into another.
const RoleCopy = "copy"

// Prefix starts the name of every engine resource of this repository's.
func (r *Repo) Prefix() string { return "litterbox-" + r.RepoSlug + "-" + r.RepoID }

// SlugOf is the sandbox a container of a repository is, by its labels:
// the sandbox label, or for one claimed from a warm pool (made before its
// name was known) the name it took, NamesFor's. "" for none (a pool entry
// not claimed yet).
func SlugOf(name string, labels map[string]string) string {
	if s := labels[LabelSandbox]; s != "" {
		return s
	}
	s, ok := strings.CutPrefix(name, "litterbox-"+labels[LabelRepoSlug]+"-"+labels[LabelRepoID]+"-")
	if !ok || labels[LabelRepoID] == "" || !ParseNameExact(s) {
		return ""
	}
	return s
}

// ScratchName names a short-lived container of this repository's. The
// '.' keeps it apart from every sandbox's resources, whose names are slugs.
func (r *Repo) ScratchName(kind string) string {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return r.Prefix() + "." + kind + "-" + hex.EncodeToString(rnd[:])
}

// Box is the handle of sandbox slug's container for its calls: addressed
// by the id its record kept when there is one, which EnsureOwn takes as
// proof that it is this repository's (CallBox).
func (r *Repo) Box(slug string) box.Box { return r.CallBox(r.Names(slug)) }

// CallBox is BoxOf addressed by n.ID when known. Lifecycle commands,
// which inspect the box by name first (OwnContainer), keep its name, so
// what they log reads as the sandbox's.
func (r *Repo) CallBox(n Names) box.Box {
	b := r.BoxOf(n)
	if n.ID != "" {
		// The id names the box made, whatever now bears its name.
		b.Name = n.ID
	}
	return b
}

// BoxOf is the handle of the container named in n.
func (r *Repo) BoxOf(n Names) box.Box {
	b := box.Of(r.Provider, n.Container)
	if n.Pool != "" {
		// Made before its name was known (ContainerSpec's environment).
		b.Env = map[string]string{"LITTERBOX_SANDBOX": n.Slug}
	}
	return b
}

// KeepID names a [setup] keep path in volume names and setup cache
// entries, where its slashes may not go.
func KeepID(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:4])
}
