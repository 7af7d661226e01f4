package devcontainer

import (
	"fmt"
	"slices"
	"sort"
)

// parser turns the decoded top-level object into a File. Every key it
// honours is marked used; whatever is left is named in Ignored unless it
// only steers an editor.
type parser struct {
	name string // the file, as given, for errors
	dir  string // its directory, relative to the repository root
	base string // ${localWorkspaceFolderBasename}
	top  map[string]any
	used map[string]bool
	f    *File
}

// unsupported says, for each key that configures the container in a way
// Litterbox does not, why it is not done.
var unsupported = map[string]string{
	"mounts":               "not supported",
	"runArgs":              "not supported",
	"privileged":           "not supported",
	"capAdd":               "not supported",
	"securityOpt":          "not supported",
	"init":                 "not supported",
	"overrideCommand":      "not supported",
	"shutdownAction":       "not supported",
	"workspaceFolder":      "not supported (Litterbox always uses /src)",
	"workspaceMount":       "not supported (Litterbox always mounts the repository at /src)",
	"postStartCommand":     notRun,
	"postAttachCommand":    notRun,
	"initializeCommand":    "never run (it would run on the host)",
	"appPort":              "not supported",
	"hostRequirements":     "not supported",
	"otherPortsAttributes": "not supported",
	"updateRemoteUserUID":  "not supported",
	"userEnvProbe":         "not supported",
}

const notRun = "not run (Litterbox runs only onCreate, updateContent and postCreate commands)"

// defaults are the values of unsupported keys that ask for what a
// container gets anyway; naming them would be noise.
var defaults = map[string]any{
	"privileged":          false,
	"init":                false,
	"overrideCommand":     true,
	"updateRemoteUserUID": true,
}

// editorOnly keys change how an editor shows the container, not the
// container. "extensions", "settings" and "devPort" are VS Code's keys
// from before "customizations" existed; old files still carry them.
var editorOnly = map[string]bool{
	"name":           true,
	"customizations": true,
	"$schema":        true,
	"waitFor":        true,
	"extensions":     true,
	"settings":       true,
	"devPort":        true,
}

func (p *parser) run() error {
	if _, ok := p.top["dockerComposeFile"]; ok {
		return fmt.Errorf("%s: docker compose dev containers are not supported; set [docker] image or build in .litterbox.toml", p.name)
	}
	for _, step := range []func() error{p.image, p.build, p.env, p.setup, p.ports, p.user} {
		if err := step(); err != nil {
			return err
		}
	}
	p.features()
	p.rest()
	p.f.Ignored = sortedUnique(p.f.Ignored)
	return nil
}

// rest names every key no step used.
func (p *parser) rest() {
	for key, v := range p.top {
		switch {
		case p.used[key] || editorOnly[key]:
		case unsupported[key] != "":
			if d, ok := defaults[key]; !isEmpty(v) && !(ok && d == v) {
				p.ignore(key, unsupported[key])
			}
		default:
			p.ignore(key, "unknown key, not supported")
		}
	}
}

// features names each feature: they install software into the image,
// and installing it is up to the image Litterbox is given.
func (p *parser) features() {
	v, ok := p.take("features")
	if !ok || isEmpty(v) {
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		p.ignore("features", "not supported")
		return
	}
	for _, id := range sortedKeys(obj) {
		p.ignore("features ("+id+")", "not supported")
	}
}

func (p *parser) user() error {
	remote, err := p.topStr("remoteUser")
	if err != nil {
		return err
	}
	container, err := p.topStr("containerUser")
	if err != nil {
		return err
	}
	p.f.User = remote
	if remote == "" {
		p.f.User = container
	}
	return nil
}

func (p *parser) image() error {
	img, err := p.topStr("image")
	p.f.Image = img
	return err
}

// take returns the top-level key and marks it used.
func (p *parser) take(key string) (any, bool) {
	v, ok := p.top[key]
	p.used[key] = true
	return v, ok
}

func (p *parser) ignore(what, why string) {
	p.f.Ignored = append(p.f.Ignored, oneLine(what+": "+why))
}

func (p *parser) errorf(where, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", p.name, where, oneLine(fmt.Sprintf(format, args...)))
}

func (p *parser) typeError(where, want string, got any) error {
	return p.errorf(where, "want %s, got %s", want, describe(got))
}

// topStr is the top-level key as a string ("" when absent or null).
func (p *parser) topStr(key string) (string, error) {
	v, _ := p.take(key)
	return p.asString(v, key)
}

// asString is v as a string ("" when null), where naming it in errors.
func (p *parser) asString(v any, where string) (string, error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", p.typeError(where, "a string", v)
	}
	return s, nil
}

// object is v as a JSON object (nil when v is null).
func (p *parser) object(v any, where string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, p.typeError(where, "an object", v)
	}
	return obj, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	return slices.Compact(s)
}
