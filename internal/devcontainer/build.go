package devcontainer

import (
	"path"
	"strconv"
	"strings"
)

// buildKeys says what becomes of each key of "build".
var buildKeys = map[string]string{
	"dockerfile": "",
	"context":    "",
	"args":       "",
	"target":     "",
	"options":    "not supported",
	"cacheFrom":  "not supported",
}

func (p *parser) build() error {
	bv, _ := p.take("build")
	b, err := p.object(bv, "build")
	if err != nil {
		return err
	}
	df, ctx, err := p.buildPaths(b)
	if err != nil || df == "" {
		return err
	}
	args, err := p.args(b["args"])
	if err != nil {
		return err
	}
	target, err := p.asString(b["target"], "build.target")
	if err != nil {
		return err
	}
	p.buildRest(b)
	p.f.Build = &Build{Dockerfile: df, Context: ctx, Args: args, Target: target}
	// The spec takes an image or a build, not both; building is the more
	// specific request, so it wins.
	if p.f.Image != "" {
		p.ignore("image", "not used (build takes precedence)")
		p.f.Image = ""
	}
	return nil
}

// buildPaths resolves the Dockerfile and the context, from "build" or the
// top-level "dockerFile" and "context" that came before it. df is "" when
// the file builds nothing.
func (p *parser) buildPaths(b map[string]any) (df, ctx string, err error) {
	df, ctx, err = p.pathPair(b)
	if err != nil {
		return "", "", err
	}
	if df == "" {
		if len(b) > 0 {
			return "", "", p.errorf("build.dockerfile", "missing")
		}
		if ctx != "" {
			p.ignore("context", "not used (no dockerfile)")
		}
		return "", "", nil
	}
	if ctx == "" {
		ctx = "."
	}
	if df, err = p.resolve(df, "build.dockerfile"); err != nil {
		return "", "", err
	}
	ctx, err = p.resolve(ctx, "build.context")
	return df, ctx, err
}

// pathPair is build.dockerfile and build.context, each falling back on
// its legacy top-level key, as written.
func (p *parser) pathPair(b map[string]any) (df, ctx string, err error) {
	if df, err = p.legacy(b, "dockerfile", "dockerFile"); err != nil {
		return "", "", err
	}
	ctx, err = p.legacy(b, "context", "context")
	return df, ctx, err
}

func (p *parser) legacy(b map[string]any, key, old string) (string, error) {
	s, err := p.asString(b[key], "build."+key)
	if err != nil {
		return "", err
	}
	o, err := p.topStr(old)
	if err != nil || s == "" {
		return o, err
	}
	if o != "" {
		p.ignore(old, "not used (build."+key+" is set)")
	}
	return s, nil
}

// resolve turns a path written relative to the devcontainer.json's
// directory, as the spec has it, into one relative to the repository
// root, refusing one that leaves the repository: the build would read
// the host's files.
func (p *parser) resolve(s, where string) (string, error) {
	// ${localWorkspaceFolder} is the repository root; a path under it
	// needs no host path to resolve.
	if rest, ok := strings.CutPrefix(s, "${localWorkspaceFolder}"); ok {
		s = path.Join(strings.Repeat("../", dirDepth(p.dir)), "./"+rest)
	}
	if path.IsAbs(s) {
		return "", p.errorf(where, "%s is an absolute path; want one inside the repository", strconv.Quote(s))
	}
	r := path.Join(p.dir, s)
	if r == ".." || strings.HasPrefix(r, "../") {
		return "", p.errorf(where, "%s is outside the repository", strconv.Quote(s))
	}
	return r, nil
}

// dirDepth is how many directories down from the root dir is.
func dirDepth(dir string) int {
	if dir == "." {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

func (p *parser) args(v any) (map[string]string, error) {
	obj, err := p.object(v, "build.args")
	if err != nil {
		return nil, err
	}
	var out map[string]string
	for _, k := range sortedKeys(obj) {
		where := child("build.args", k)
		s, err := p.asString(obj[k], where)
		if err != nil {
			return nil, err
		}
		s, ok, err := p.expand(where, s, inArgs)
		if err != nil {
			return nil, err
		}
		if ok {
			out = set(out, k, s)
		}
	}
	return out, nil
}

// buildRest names the keys of "build" that were not used.
func (p *parser) buildRest(b map[string]any) {
	for k, v := range b {
		why, known := buildKeys[k]
		switch {
		case !known:
			p.ignore(child("build", k), "unknown key, not supported")
		case why != "" && !isEmpty(v):
			p.ignore(child("build", k), why)
		}
	}
}

// set is m with k set to v, m made when nil: an empty map stays nil, so
// that a File compares equal to one written out by hand.
func set(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
