// Package projectimage names the official image that fits a project, from
// the files at its root that say what it is built with (go.mod,
// Cargo.toml, pyproject.toml, package.json, ...), so that a sandbox on
// the default image (busybox, which has none of those tools) says which
// image to set, and how.
package projectimage

import (
	"fmt"
	"io"
	"os"
	"regexp"
)

// Suggestion is an image for the project, and what says so.
type Suggestion struct {
	// Kind is what the project is, for people: "Go", "Python", ...
	Kind string
	// File is the file at the root that says so.
	File string
	// Image is the official image with its tools.
	Image string
	// Tool is a command the image has and busybox lacks.
	Tool string
}

// Config is the one line of config that sets the image, for
// [docker] in .litterbox.toml.
func (s Suggestion) Config() string { return fmt.Sprintf("image = %q", s.Image) }

// String says it in one line: what the project is, and the config.
func (s Suggestion) String() string {
	return fmt.Sprintf("this is a %s project (%s) and busybox has no %s: set %s under [docker] in .litterbox.toml", s.Kind, s.File, s.Tool, s.Config())
}

// kinds are the projects recognised, in the order they are tried: a
// repository with several (a Go service with a package.json for its
// tooling) gets the first.
var kinds = []struct {
	kind, tool string
	files      []string
	image      func(content string) string
}{
	{"Go", "go", []string{"go.mod"}, goImage},
	{"Rust", "cargo", []string{"Cargo.toml"}, fixed("rust:1")},
	{"Python", "python3", []string{"pyproject.toml", "requirements.txt", "setup.py", "Pipfile"}, fixed("python:3")},
	{"Node.js", "node", []string{"package.json"}, fixed("node:lts")},
	{"Ruby", "ruby", []string{"Gemfile"}, fixed("ruby:3")},
	{"Java (Maven)", "mvn", []string{"pom.xml"}, fixed("maven:3-eclipse-temurin-21")},
	{"Java (Gradle)", "gradle", []string{"build.gradle", "build.gradle.kts"}, fixed("gradle:jdk21")},
	{"PHP", "php", []string{"composer.json"}, fixed("composer:2")},
	{"Elixir", "mix", []string{"mix.exs"}, fixed("elixir:1")},
}

func fixed(image string) func(string) string { return func(string) string { return image } }

// goDirective is go.mod's "go 1.26" or "go 1.26.7" line.
var goDirective = regexp.MustCompile(`(?m)^go[ \t]+(1\.[0-9]+)(\.[0-9]+)?[ \t]*(//.*)?$`)

// goImage is golang at the minor version go.mod asks for, else the
// newest.
func goImage(gomod string) string {
	if m := goDirective.FindStringSubmatch(gomod); m != nil {
		return "golang:" + m[1]
	}
	return "golang:1"
}

// maxRead bounds what is read of a file: the lines that matter are at the
// top, and the root is the user's checkout, which may hold anything.
const maxRead = 64 << 10

// Suggest looks at the files at root (the user's work tree) and names
// the image that fits, if one does. It reads through an os.Root, so a
// link at one of those names leads nowhere outside root.
func Suggest(root string) (Suggestion, bool) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return Suggestion{}, false
	}
	defer r.Close()
	for _, k := range kinds {
		for _, f := range k.files {
			content, ok := readHead(r, f)
			if !ok {
				continue
			}
			return Suggestion{Kind: k.kind, File: f, Image: k.image(content), Tool: k.tool}, true
		}
	}
	return Suggestion{}, false
}

// readHead is the start of regular file name, if it is one.
func readHead(r *os.Root, name string) (string, bool) {
	f, err := r.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRead))
	return string(b), err == nil
}
