package devcontainer

import (
	"maps"
	"strings"
)

// Where a value is, which decides what becomes of a reference to the host
// or to the container's environment.
type place int

const (
	inEnv   place = iota // containerEnv, remoteEnv
	inArgs               // build.args: the container does not exist yet
	inSetup              // lifecycle commands
)

// The sandbox's workspace, whatever the file says (workspaceFolder is
// not honoured).
const (
	workspace         = "/src"
	workspaceBasename = "src"
)

// ref is one ${name} or ${name:arg:...} in a value.
type ref struct {
	raw  string // as written, kept when Litterbox does not replace it
	name string
	args []string
}

// replaceRefs replaces each reference in s by what f returns. Like the
// reference implementation (devcontainers/cli), a reference runs to the
// first "}" and ":" separates its parts, so a default holds neither.
func replaceRefs(s string, f func(ref) string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			break
		}
		end := i + 2 + j + 1
		parts := strings.Split(s[i+2:end-1], ":")
		b.WriteString(s[:i])
		b.WriteString(f(ref{raw: s[i:end], name: parts[0], args: parts[1:]}))
		s = s[end:]
	}
	b.WriteString(s)
	return b.String()
}

const (
	hostEnv  = " is not read (host variables never reach a sandbox from a repository file)"
	hostPath = " is not read (host paths never reach a sandbox from a repository file)"
)

// expand replaces in s, the value at where, the variables that need no
// container. A reference to the host makes ok false, as the value would
// be wrong without it (the caller drops it), except in a command, where
// it becomes "" so the rest of the setup still runs. Either way it is named
// in Ignored: the sandbox differs from what the file describes.
// ${containerEnv:...} stays for ExpandContainerEnv.
func (p *parser) expand(where, s string, at place) (_ string, ok bool, err error) {
	ok = true
	out := replaceRefs(s, func(r ref) string {
		switch {
		case r.name == "localEnv" || r.name == "env":
			p.ignore(where, r.raw+hostEnv)
			ok = false
			return ""
		case r.name == "localWorkspaceFolder" && len(r.args) == 0:
			p.ignore(where, r.raw+hostPath)
			ok = false
			return ""
		case r.name == "containerEnv":
			if len(r.args) == 0 || r.args[0] == "" {
				err = p.errorf(where, "%s names no variable", r.raw)
			} else if at == inArgs {
				p.ignore(where, r.raw+" is not expanded (the image is not built yet)")
			}
			return r.raw
		case r.name == "devcontainerId":
			p.ignore(where, r.raw+" is not substituted")
			return r.raw
		case len(r.args) > 0:
			return r.raw
		}
		return p.plainVar(r)
	})
	return out, ok || at == inSetup, err
}

// plainVar is the value of a variable that takes no argument, or the
// reference itself for one Litterbox does not know (a shell's ${HOME}).
func (p *parser) plainVar(r ref) string {
	switch r.name {
	case "containerWorkspaceFolder":
		return workspace
	case "containerWorkspaceFolderBasename":
		return workspaceBasename
	case "localWorkspaceFolderBasename":
		return p.base
	}
	return r.raw
}

// expandContainerEnv replaces each ${containerEnv:NAME[:default]} in s:
// the variable's value in env even when empty, else the default, else "".
func expandContainerEnv(s string, env map[string]string) string {
	return replaceRefs(s, func(r ref) string {
		if r.name != "containerEnv" || len(r.args) == 0 {
			return r.raw
		}
		if v, ok := env[r.args[0]]; ok {
			return v
		}
		if len(r.args) > 1 {
			return r.args[1]
		}
		return ""
	})
}

// ExpandContainerEnv replaces ${containerEnv:NAME} and
// ${containerEnv:NAME:default} in Env and Setup, image being the image's
// environment. In remoteEnv values and commands the container's
// environment includes the file's own containerEnv, as it does in the
// running container. Env and Setup are recomputed from the file, so a
// second call starts afresh.
func (f *File) ExpandContainerEnv(image map[string]string) {
	env, look := f.mergeEnv(expandContainerEnv, image)
	f.Env = env
	f.Setup = render(f.steps, func(s string) string { return expandContainerEnv(s, look) })
}

// mergeEnv is containerEnv overlaid by remoteEnv, each value passed
// through sub with the environment it may refer to; look is the
// container's environment: image and containerEnv.
func (f *File) mergeEnv(sub func(string, map[string]string) string, image map[string]string) (env, look map[string]string) {
	look = maps.Clone(image)
	for _, k := range sortedKeys(f.containerEnv) {
		v := sub(f.containerEnv[k], image)
		env = set(env, k, v)
		look = set(look, k, v)
	}
	for _, k := range sortedKeys(f.remoteEnv) {
		env = set(env, k, sub(f.remoteEnv[k], look))
	}
	for _, k := range f.unset {
		delete(env, k)
	}
	if len(env) == 0 {
		env = nil
	}
	return env, look
}

func keep(s string, _ map[string]string) string { return s }

func (p *parser) env() error {
	ce, err := p.envObject("containerEnv", false)
	if err != nil {
		return err
	}
	re, err := p.envObject("remoteEnv", true)
	if err != nil {
		return err
	}
	for _, k := range sortedKeys(ce) {
		if v, ok, err := p.expand(child("containerEnv", k), *ce[k], inEnv); err != nil {
			return err
		} else if ok {
			p.f.containerEnv = set(p.f.containerEnv, k, v)
		}
	}
	for _, k := range sortedKeys(re) {
		if err := p.remoteVar(k, re[k]); err != nil {
			return err
		}
	}
	p.f.Env, _ = p.f.mergeEnv(keep, nil)
	return nil
}

// remoteVar takes remoteEnv[k]; null unsets the variable, as VS Code
// does. A value dropped for referring to the host leaves containerEnv's.
func (p *parser) remoteVar(k string, v *string) error {
	if v == nil {
		p.f.unset = append(p.f.unset, k)
		return nil
	}
	s, ok, err := p.expand(child("remoteEnv", k), *v, inEnv)
	if ok && err == nil {
		p.f.remoteEnv = set(p.f.remoteEnv, k, s)
	}
	return err
}

// envObject is the top-level key as variables; a nil value is JSON null,
// which only remoteEnv allows.
func (p *parser) envObject(key string, nullable bool) (map[string]*string, error) {
	v, _ := p.take(key)
	obj, err := p.object(v, key)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*string, len(obj))
	for _, k := range sortedKeys(obj) {
		switch e := obj[k].(type) {
		case string:
			out[k] = &e
		case nil:
			if !nullable {
				return nil, p.typeError(child(key, k), "a string", e)
			}
			out[k] = nil
		default:
			want := "a string"
			if nullable {
				want = "a string or null"
			}
			return nil, p.typeError(child(key, k), want, e)
		}
	}
	return out, nil
}
