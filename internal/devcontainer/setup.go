package devcontainer

import "strings"

// lifecycle are the commands Litterbox runs, in the order the spec runs
// them when a container is created. postStart and postAttach run on every
// start or attach, which a sandbox has no equivalent of.
var lifecycle = []string{"onCreateCommand", "updateContentCommand", "postCreateCommand"}

// step is one command: a shell line, or an argv when argv is not nil.
// Values keep ${containerEnv:...} until rendered.
type step struct {
	shell string
	argv  []string
}

func (p *parser) setup() error {
	for _, key := range lifecycle {
		v, _ := p.take(key)
		steps, err := p.command(v, key)
		if err != nil {
			return err
		}
		p.f.steps = append(p.f.steps, steps...)
	}
	p.f.Setup = render(p.f.steps, func(s string) string { return s })
	return nil
}

// command is a lifecycle command in any of its three forms.
func (p *parser) command(v any, where string) ([]step, error) {
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		s, ok, err := p.single(v, where, "a string, an array of strings or an object")
		if err != nil || !ok {
			return nil, err
		}
		return []step{s}, nil
	}
	// The spec runs the entries of the object form in parallel. Litterbox
	// runs them one after another in key order: the same result unless they
	// wait on each other, and the same order every time.
	var steps []step
	for _, k := range sortedKeys(obj) {
		s, ok, err := p.single(obj[k], child(where, k), "a string or an array of strings")
		if err != nil {
			return nil, err
		}
		if ok {
			steps = append(steps, s)
		}
	}
	return steps, nil
}

// single is a command in string or array form; ok is false when it is
// empty.
func (p *parser) single(v any, where, want string) (s step, ok bool, err error) {
	switch v := v.(type) {
	case string:
		line, _, err := p.expand(where, v, inSetup)
		return step{shell: line}, strings.TrimSpace(line) != "", err
	case []any:
		argv, err := p.argv(v, where)
		return step{argv: argv}, len(argv) > 0, err
	}
	return step{}, false, p.typeError(where, want, v)
}

func (p *parser) argv(list []any, where string) ([]string, error) {
	argv := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, p.typeError(index(where, i), "a string", e)
		}
		s, _, err := p.expand(index(where, i), s, inSetup)
		if err != nil {
			return nil, err
		}
		argv = append(argv, s)
	}
	return argv, nil
}

// render is the steps as one shell line, sub applied to each value before
// it is quoted, so an expanded value is never read as shell syntax in an
// argv.
func render(steps []step, sub func(string) string) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.line(sub, len(steps) > 1)
	}
	return strings.Join(parts, " && ")
}

// line is the step as shell. An argv is quoted word by word, so it runs
// as the program and arguments it lists, as the spec has it. A shell line
// joined to others runs in a shell of its own, as the spec runs each one:
// otherwise a "cd" or "exit" would carry into the next command, and a
// trailing "# comment" or heredoc would swallow the " && " after it.
func (s step) line(sub func(string) string, joined bool) string {
	if s.argv == nil {
		line := sub(s.shell)
		if joined {
			return "sh -c " + shquote(line)
		}
		return line
	}
	words := make([]string, len(s.argv))
	for i, a := range s.argv {
		words[i] = shquote(sub(a))
	}
	return strings.Join(words, " ")
}

// shquote quotes s for sh: inside single quotes nothing is special, and a
// single quote is closed, escaped and reopened.
func shquote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
