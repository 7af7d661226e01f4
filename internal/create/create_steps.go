package create

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/basetree"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/preflight"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
)

// creation is one create in progress: what each step decided, for the
// steps after it and for the report. The steps before claim only look
// (git, the engine, the config) and refuse; claim takes the name; every
// step after it undoes what the create made when it fails.
type creation struct {
	m    *Creator
	opts CreateOptions
	slug string
	n    hostrepo.Names
	cfg  config.Config
	// uid and gid own the sandbox's files.
	uid, gid int
	weakened []string
	built    *image.BuiltImage
	imageID  string
	// base is what the sandbox holds; tip is where its branch starts: the
	// base, or a fork's source's tip.
	base, tip string
	// agentBase: no ref of the user's reaches the base, so its setup runs
	// without the setup network, its build without a network, and the
	// setup cache keeps nothing of it (hostrepo.Persons).
	agentBase bool
	warnings  []string
	cache     *CacheReport
	cacheHit  *setupcache.Entry
	cacheKey  string
	rec       *layout.Record
	// pooled: the box came from the warm pool, its volumes prepared;
	// fill: this is no create but a pool entry's making.
	pooled, fill bool
	// storage is where /src lives, for the report, asked while the rest
	// of the create runs (storageAhead).
	storage func() string
	// boxes is the engine's listing the memory budget read, whose pool
	// entries a claim tries first.
	boxes []box.Summary
	// facts, once configure is done, are being read for the memory budget.
	facts *budgetFacts
	// egressMade: this create made the egress proxy, which goes with it
	// when it fails (a leftover's, whose name it found taken, stays).
	egressMade bool
	// proxyDone gives the egress proxy's start's outcome.
	proxyDone chan error
	// dirty gives the warning about uncommitted changes, asked while the
	// create runs, to go at dirtyAt among the warnings.
	dirty   chan string
	dirtyAt int
	// files is where /src comes from, settled by plan.
	files filesSource
	// treeKey names the base tree /src lies over ("" for a /src of its
	// own), settled by plan; tree is that tree once made or found.
	treeKey string
	tree    *basetree.Tree
	subs    []Submodule
	setup   layout.SetupResult
	svcs    []services.State
	limits  Limits
}

// Create makes a sandbox: a branch, a record and a container holding the
// base commit's files, set up by the config's setup command.
func (m *Creator) Create(ctx context.Context, opts CreateOptions) (*Created, error) {
	c := &creation{m: m, opts: opts}
	if err := c.configure(ctx); err != nil {
		return nil, err
	}
	if info, ok := m.Repo.Provider.(box.HostInfo); ok {
		// While the image is checked; waited for whatever happens, so a
		// create leaves no command of its own running.
		c.facts = readBudget(ctx, m.Repo.Provider, info)
		defer func() { <-c.facts.done }()
	}
	defer c.tellDirty()
	if err := runSteps(ctx, c.steps()); err != nil {
		return nil, err
	}
	c.keepCache(ctx)
	c.startServices(ctx)
	c.tellDirty()
	return c.report(ctx), nil
}

// steps are a create's steps. Those before the branch only look (git, the
// engine, the config) and refuse; the branch takes the name (of two
// racing creates exactly one gets past it); each step after takes away
// what it made when a later one fails.
func (c *creation) steps() []step {
	return []step{
		{name: "image", do: c.resolveImage},
		{name: "name", do: c.checkFree},
		{name: "limits", do: c.checkLimits},
		{name: "plan", do: c.plan},
		{name: "branch", do: c.makeBranch, undo: c.removeBranch},
		{name: "record", do: c.saveRecord, undo: c.removeRecord},
		{name: "egress proxy", do: c.startEgress, undo: c.removeEgress},
		{name: "base tree", do: c.layerFiles, undo: c.removeLayer},
		{name: "box", do: c.makeBox, undo: c.removeBox},
		{name: "files", do: c.fillFiles},
		{name: "setup", do: c.setUp},
	}
}

// configure reads the config once for this create, with the command
// line's network, and refuses what may not be: a weakening not allowed, a
// secret that cannot be read, a user that is no user, a repository whose
// id is unreadable.
func (c *creation) configure(ctx context.Context) (err error) {
	m := c.m
	if c.slug, err = hostrepo.ParseName(c.opts.Name); err != nil {
		return err
	}
	if c.cfg, err = m.Repo.CreateConfig(); err != nil {
		return err
	}
	if net := c.opts.Network; net != "" {
		if net == "none" && len(c.cfg.Ports) > 0 {
			return fmt.Errorf("--network none: port %q needs a network", c.cfg.Ports[0].Name)
		}
		c.cfg.Network = net
		if c.cfg.From == nil {
			c.cfg.From = map[string]string{}
		}
		c.cfg.From["docker.network"] = hostrepo.FlagNetwork
	}
	if iso := c.opts.Isolation; iso != "" {
		if iso != config.IsolationContainer && iso != config.IsolationGVisor {
			return fmt.Errorf(`--isolation %q: use "container" or "gvisor"`, iso)
		}
		c.cfg.Isolation = iso
	}
	if c.weakened, err = m.Repo.CheckWeakenings(ctx, c.cfg); err != nil {
		return err
	}
	// Every secret must be readable before anything is made (a pool
	// entry holds none, and its fill may run with nobody to answer).
	if !c.fill {
		if _, err := m.Repo.Secrets.Resolve(ctx, c.cfg.Secrets); err != nil {
			return err
		}
	}
	if c.uid, c.gid, err = c.cfg.IDs(); err != nil {
		return err
	}
	if m.Repo.IDErr != nil {
		return fmt.Errorf("reading this repository's litterbox id: %w", m.Repo.IDErr)
	}
	return nil
}

// settleBase resolves the base (once: before the build when there is one,
// else when the create plans), and says whose it is. HEAD is the user's; a base_ref costs
// one rev-list more. A sandbox made from an agent's commit is made as if
// the config gave its setup no network of its own: nothing from that
// commit runs with more network than the agent's own sandbox has.
func (c *creation) settleBase(ctx context.Context) (err error) {
	if c.base, err = c.m.createBase(ctx, c.opts); err != nil {
		return err
	}
	if c.opts.BaseRef == "" {
		return nil
	}
	persons, err := c.m.Repo.Persons(ctx, c.base)
	if err != nil {
		return err
	}
	if c.agentBase = !persons; c.agentBase {
		c.warnings = append(c.warnings, c.agentBaseNote())
		c.cfg.SetupOpen, c.cfg.SetupAllow = false, nil
	}
	return nil
}

// agentBaseNote is the one line that tells a person what a base of an
// agent's commit changed.
func (c *creation) agentBaseNote() string {
	var what []string
	if c.cfg.SetupOpen || c.cfg.SetupAllow != nil {
		what = append(what, "its setup ran without the setup network")
	}
	if c.cfg.Build != nil {
		what = append(what, "its image was built with no network")
	}
	if setupcache.Cacheable(c.cfg) {
		what = append(what, "the setup cache keeps nothing of it")
	}
	note := fmt.Sprintf("base %s is an agent's commit (no branch, tag or HEAD of yours reaches it)", hostrepo.ShortID(c.base))
	if len(what) == 0 {
		return note
	}
	return note + ": " + strings.Join(what, ", ")
}

// resolveImage settles the image: a fork's source's, or the project image
// built from the base commit's files, or the config's; checks that the
// engine has it (pulling it if need be) and that the helper runs on it;
// and reads a devcontainer's user and environment from it.
func (c *creation) resolveImage(ctx context.Context) (err error) {
	m := c.m
	if c.opts.fork != nil {
		// The files were made by the source's toolchain.
		c.cfg.Image, c.cfg.Build = c.opts.fork.image, nil
	} else if c.cfg.Build != nil {
		// The image is built from the base commit's files.
		if err := c.settleBase(ctx); err != nil {
			return err
		}
		if c.built, err = c.images().Project(ctx, &c.cfg, c.base, !c.agentBase); err != nil {
			return err
		}
	}
	if !m.Repo.Provider.Caps().EgressProxy {
		if err := egressproxy.PolicyNetwork(c.cfg); err != nil {
			return err
		}
	}
	if c.imageID, err = m.preflight(ctx, c.cfg); err != nil {
		return err
	}
	if c.cfg.Devcontainer() == nil {
		return nil
	}
	if err := c.images().DevcontainerImage(ctx, &c.cfg); err != nil {
		return err
	}
	// A user name may have turned out to be root.
	if uid, _, _ := c.cfg.IDs(); uid == 0 && c.cfg.UserName() != "" {
		more, err := m.Repo.AllowWeakenings(ctx, slices.DeleteFunc(c.cfg.Weakenings(), func(w config.Weakening) bool { return w.Key != "docker.user" }))
		if err != nil {
			return err
		}
		c.weakened = append(c.weakened, more...)
	}
	return nil
}

// checkFree refuses a name this repository still has a record of.
func (c *creation) checkFree(ctx context.Context) error {
	m := c.m
	// A new sandbox gets new names, whatever an old record says.
	c.n = hostrepo.NamesFor(m.Repo.RepoSlug, m.Repo.RepoID, c.slug)
	rec, err := m.Repo.Store().Load(c.slug)
	if err != nil || rec == nil {
		return err
	}
	// A live sandbox, or the state of one whose branch was deleted.
	if refs, err := m.Repo.Git.ListRefs(ctx, c.n.Ref); err != nil || len(refs) > 0 {
		if rec.Status == layout.FailedSetup {
			return &ExistsError{Name: c.slug, Detail: "made before, its setup command failed; it is usable as it is: use it by this name"}
		}
		return &ExistsError{Name: c.slug}
	}
	return &ExistsError{Name: c.slug, Detail: "its branch is gone but its state is kept in " + m.Repo.Layout().Record(c.slug) + "; `litterbox delete " + c.slug + "` clears it"}
}

// plan settles the base and the branch's start, and whether the setup
// cache has this setup's result already, with the warnings a person
// should read.
func (c *creation) plan(ctx context.Context) (err error) {
	m, opts := c.m, c.opts
	if c.base == "" {
		if err := c.settleBase(ctx); err != nil {
			return err
		}
	}
	c.tip = c.base
	if opts.fork != nil {
		c.base, c.tip = opts.fork.base, opts.fork.tip
	}
	switch {
	case opts.fork != nil || !setupcache.Cacheable(c.cfg):
	case !m.Repo.Provider.Caps().VolumeCopy:
		// A cluster tells no image id to key on and has no container that
		// borrows another's volumes to copy with: say so once, instead of
		// keying, looking up and failing to keep an entry on every create.
		c.warnings = append(c.warnings, "setup cache not used: "+box.ErrUnsupported.Error())
	default:
		if c.cacheKey, err = m.SetupCache().Key(ctx, c.cfg, c.imageID, c.base); err != nil {
			c.warnings = append(c.warnings, "setup cache not used: "+preflight.OneLineErr(err))
			c.cacheKey = ""
		} else if c.cacheHit = m.SetupCache().Lookup(ctx, c.cacheKey); c.cacheHit != nil {
			h := c.cacheHit
			c.cache = &CacheReport{Key: c.cacheKey[:12], Hit: true, Files: h.Files, Bytes: h.Bytes, From: h.From}
		}
	}
	c.files = filesFor(c)
	if err := c.settleTree(ctx); err != nil {
		return err
	}
	if opts.BaseRef == "" && opts.fork == nil {
		c.askDirty(ctx)
	}
	return nil
}

// askDirty asks git, while the rest of the create runs, whether the work
// tree holds changes the sandbox will not: git status reads the whole work
// tree, and a create over a base tree is otherwise as fast at any size.
// The warning keeps its place among the others (tellDirty).
func (c *creation) askDirty(ctx context.Context) {
	c.dirtyAt, c.dirty = len(c.warnings), make(chan string, 1)
	go func() {
		w := ""
		if n, err := c.m.Repo.Uncommitted(ctx); err == nil && n > 0 {
			w = fmt.Sprintf("%d uncommitted change(s) in the host work tree are NOT in the sandbox; it holds commit %s only", n, hostrepo.ShortID(c.base))
		}
		c.dirty <- w
	}()
}

// tellDirty waits for askDirty's answer and puts its warning in place. A
// create waits for it whatever happens, so it leaves no git running.
func (c *creation) tellDirty() {
	if c.dirty == nil {
		return
	}
	if w := <-c.dirty; w != "" {
		c.warnings = slices.Insert(c.warnings, c.dirtyAt, w)
	}
	c.dirty = nil
}

// makeBranch takes the name: update-ref with an empty old value is
// atomic, so of two racing creates exactly one gets past it.
func (c *creation) makeBranch(ctx context.Context) error {
	m, n := c.m, c.n
	t := time.Now()
	reason := "litterbox: create " + c.slug
	if c.opts.fork != nil {
		reason = "litterbox: fork " + c.opts.fork.slug + " as " + c.slug
	}
	if err := m.Repo.Git.CreateRef(ctx, n.Ref, c.tip, reason); err != nil {
		if errors.Is(err, gitcli.ErrRefExists) {
			return madeNothing{&ExistsError{Name: c.slug}}
		}
		return madeNothing{&hostrepo.StepError{Step: "creating branch " + n.Branch, Err: err}}
	}
	c.step("branch "+n.Branch, t)
	return nil
}

// removeBranch deletes the branch, guarded by its start: never one that
// someone moved meanwhile.
func (c *creation) removeBranch(ctx context.Context) []string {
	if err := c.m.Repo.Git.DeleteRef(ctx, c.n.Ref, c.tip); err != nil {
		return []string{"branch " + c.n.Branch}
	}
	return nil
}

// saveRecord saves the record that says the create is under way.
func (c *creation) saveRecord(ctx context.Context) error {
	m, n, cfg := c.m, c.n, c.cfg
	c.rec = &layout.Record{
		Name: c.slug, Branch: n.Branch, Container: n.Container, Volume: n.Volume, Volumes: ownVolumes(n, cfg.SetupKeep)[1:],
		Base: c.base, Image: cfg.Image, Created: m.Repo.Now().UTC(), Status: layout.Creating, CreatorPID: os.Getpid(),
		User: cfg.User, Services: cfg.Services, Helper: m.Agent.Helper.ContainerPath(), Limits: layout.LimitsOf(cfg),
		Allow: cfg.Allow, Secrets: cfg.Secrets, Isolation: cfg.Isolation,
	}
	c.rec.Client, _ = layout.ClientOf(ctx)
	var err error
	if c.rec.Injection, err = egressproxy.NewInjection(c.slug, cfg); err != nil {
		return err
	}
	if err := m.Repo.Store().Save(c.rec); err != nil {
		return &hostrepo.StepError{Step: "saving sandbox state", Err: err}
	}
	return nil
}

// removeRecord removes the record and the sandbox's state on the host.
func (c *creation) removeRecord(context.Context) []string {
	var left []string
	if err := c.m.Repo.Store().Remove(c.slug); err != nil {
		left = append(left, "state file "+c.m.Repo.Layout().Record(c.slug))
	}
	return append(left, c.m.Repo.RemoveHostState(c.slug)...)
}

// startEgress makes the egress volume and starts the proxy in the
// background, when the sandbox has one: it starts while the box is made,
// which waits for it (proxyDone).
func (c *creation) startEgress(ctx context.Context) error {
	m, n, cfg := c.m, c.n, c.cfg
	c.proxyDone = make(chan error, 1)
	if !m.Proxies().Proxied(cfg) {
		c.proxyDone <- nil
		return nil
	}
	c.rec.Egress, c.egressMade = true, true
	if err := m.Proxies().MakeVolume(ctx, n, c.uid, c.gid); err != nil {
		return err
	}
	go func() {
		t := time.Now()
		err := m.Proxies().Start(ctx, n, cfg, egressproxy.FirstAllow(cfg))
		if err == nil {
			c.step("egress proxy "+n.Egress(), t)
		}
		c.proxyDone <- err
	}()
	return nil
}

// removeEgress removes the egress proxy and its volume, when this create
// made them (a leftover's, whose name it found taken, stays).
func (c *creation) removeEgress(ctx context.Context) []string {
	if !c.egressMade {
		return nil
	}
	_, left := c.m.Proxies().Remove(ctx, c.n)
	return left
}

// makeBox claims a warm pool entry for the sandbox, or else makes its
// container (with the files' prefill) beside the egress proxy.
func (c *creation) makeBox(ctx context.Context) error {
	if claimed, err := c.claimPooled(ctx); claimed || err != nil {
		return err
	}
	m, n := c.m, c.n
	t := time.Now()
	if c.tree != nil {
		if err := c.overlay(ctx, c.tree.Volume, c.rec.Layer.Cache, n.Volume, m.Repo.Labels(n.Slug, "true")); err != nil {
			return err
		}
		if err := c.homeOverlay(ctx, m.Repo.Labels(n.Slug, "true")); err != nil {
			return err
		}
	}
	pmap, id, err := m.runContainer(ctx, n, c.base, c.runConfig(), c.files.prefill())
	proxyErr := <-c.proxyDone
	// A leftover's proxy: not this create's to remove.
	leftoverProxy := errors.Is(proxyErr, box.ErrNameInUse)
	c.egressMade = c.egressMade && !leftoverProxy
	if err != nil {
		return boxNotMade(ctx, m, n, err)
	}
	c.rec.Ports, c.rec.ContainerID = pmap, id
	c.step("container "+n.Container, t)
	if leftoverProxy {
		return &ExistsError{Name: c.slug, Detail: "egress proxy " + n.Egress() + " exists without its sandbox; delete it with: litterbox delete " + c.slug}
	}
	return proxyErr
}

// boxNotMade marks a failure to make the box that made nothing of it: a
// container of someone else's holding the name, no free port, an engine
// that never made it. Gone unreachable after it made the container, the
// engine may have left it: the undo tries, and names what it could not
// remove.
func boxNotMade(ctx context.Context, m *Creator, n hostrepo.Names, err error) error {
	var nf *ports.NoFreeError
	var nm notMade
	switch {
	case errors.Is(err, box.ErrNameInUse):
		return madeNothing{m.nameInUse(ctx, n)}
	case errors.Is(err, box.ErrEngineUnreachable) && errors.As(err, &nm), errors.As(err, &nf):
		return madeNothing{err}
	}
	return err
}

// removeBox removes the sandbox's container and the volumes its record
// names: a claimed pool entry's, or its own. The record in hand is the
// one this create saved last, so no listing or read is needed; after a
// claim that lost its race it names the sandbox's own volumes again,
// never the entry another create took.
func (c *creation) removeBox(ctx context.Context) []string {
	m, n := c.m, c.n
	var left []string
	if err := m.Repo.BoxOf(n).Remove(ctx); err != nil && !errors.Is(err, box.ErrNotFound) {
		left = append(left, "container "+n.Container)
	}
	for _, v := range append([]string{n.Volume}, m.ExtraVolumes(ctx, n, c.rec)...) {
		if err := m.Repo.Provider.RemoveVolume(ctx, v); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
			left = append(left, "volume "+v)
		}
	}
	return left
}

// fillFiles puts into /src what its prefill did not.
func (c *creation) fillFiles(ctx context.Context) error { return c.files.fill(ctx) }

// setUp runs the setup command, unless the files came set up (a fork, a
// setup cache hit), in which case it takes the baseline only; then takes
// the setup's own network away.
func (c *creation) setUp(ctx context.Context) (err error) {
	m, n, cfg := c.m, c.n, c.cfg
	setupCmd, start := c.files.setup()
	t := time.Now()
	if c.setup, err = m.runSetup(ctx, n, setupCmd, egressproxy.SetupEnv(cfg), start); err != nil {
		return &hostrepo.StepError{Step: "running the setup command", Err: err}
	}
	if setupCmd == "" {
		c.setup.Command, c.setup.Skipped, c.setup.ExitCode, c.setup.Stderr = m.Repo.Secrets.Seen().Redact(cfg.SetupCommand), false, 0, ""
	}
	if err := m.Proxies().EndSetupNetwork(ctx, n, cfg); err != nil {
		return err
	}
	if c.setup.Skipped {
		c.warnings = append(c.warnings, "the image has no /bin/sh: the setup command did not run, and bash is not available (read, write, edit, patch, ls, glob and grep are)")
	}
	if c.setup.Snapshot != "" {
		c.warnings = append(c.warnings, "the setup command changed tracked files; committed as "+hostrepo.ShortID(c.setup.Snapshot))
	}
	c.step("setup: "+c.setup.Command, t)
	return nil
}

// keepCache keeps what a good setup made in the setup cache, when it was
// looked up and missed. A failure to keep it is a warning, not a failed
// create.
func (c *creation) keepCache(ctx context.Context) {
	if c.cacheKey == "" || c.cacheHit != nil || c.setup.ExitCode != 0 || c.agentBase {
		return
	}
	if c.setup.Snapshot != "" {
		c.warnings = append(c.warnings, "setup cache: not kept, because the setup command changed tracked files")
		return
	}
	t := time.Now()
	e, err := c.m.SetupCache().Save(ctx, c.n, c.cfg, c.cacheKey, c.imageID, c.base)
	switch {
	case errors.Is(err, setupcache.ErrNothingKept):
		c.cache = &CacheReport{Key: c.cacheKey[:12], NotKept: err.Error()}
	case err != nil:
		c.warnings = append(c.warnings, "setup cache: not kept: "+preflight.OneLineErr(err))
	case e != nil:
		c.cache = &CacheReport{Key: c.cacheKey[:12], Saved: true, Files: e.Files, Bytes: e.Bytes}
		c.step("keep setup cache "+c.cacheKey[:12], t)
	}
}

// startServices starts the config's services after a good setup; one
// that fails to start is a warning.
func (c *creation) startServices(ctx context.Context) {
	specs := c.cfg.Services
	if c.setup.ExitCode != 0 || len(specs) == 0 {
		return
	}
	t := time.Now()
	var err error
	c.svcs, err = servicectl.Start(ctx, c.m.Repo, c.slug, c.n.Container, specs)
	if err != nil {
		c.warnings = append(c.warnings, "services: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	c.step(fmt.Sprintf("start %d service(s)", len(specs)), t)
}

// report records the sandbox as ready (or as failed in its setup) and
// tells what was made.
func (c *creation) report(ctx context.Context) *Created {
	m, n, cfg, setup := c.m, c.n, c.cfg, c.setup
	c.rec.Setup = &setup
	c.rec.Status, c.rec.CreatorPID = layout.Ready, 0
	status := StatusActive
	if setup.ExitCode != 0 && !(setup.Skipped && cfg.SetupCommand == config.DefaultSetup) {
		c.rec.Status, status = layout.FailedSetup, StatusFailedSetup
	}
	if err := m.Repo.Store().Save(c.rec); err != nil {
		c.warnings = append(c.warnings, "could not save sandbox state: "+err.Error())
	}
	if c.storage == nil {
		c.storage = storageAhead(ctx, m.Repo.Provider)
	}
	storage := c.storage()
	if c.tree != nil {
		storage = "its own layer over the files of " + hostrepo.ShortID(c.base) + ", shared with its other sandboxes (" + c.tree.Volume + ")"
		if l := c.rec.Layer; l != nil && l.Cache != "" {
			storage = "its own layer over the setup cache's files and those of " + hostrepo.ShortID(c.base) + ", shared with its other sandboxes (" + l.Cache + ", " + c.tree.Volume + ")"
		}
	}
	return &Created{
		Storage: storage, Name: c.slug, Branch: n.Branch, Container: n.Container, Base: c.base,
		Image: cfg.Image, ImageFrom: cfg.From["docker.image"], ImageHint: m.imageHint(cfg), Build: c.built, SetupCache: c.cache, ForkedFrom: forkedFrom(c.opts.fork), Pool: c.n.Pool,
		Status: status, Setup: setup, Ports: orEmpty(c.rec.Ports), Services: orEmpty(c.svcs), Network: egressproxy.NetworkOf(cfg), Isolation: cfg.Isolation, Limits: c.limits, Allow: cfg.Allow, SetupNetwork: egressproxy.SetupNetworkOf(cfg), SetupFrom: cfg.From["docker.setup-command"],
		Workdir: hostrepo.Workdir, ConfigFiles: orEmpty(cfg.Files), Weakened: c.weakened, Submodules: orEmpty(c.subs), Notes: orEmpty(cfg.Notes), Warnings: orEmpty(c.warnings),
		Refill: cfg.PoolSize > 0 && c.opts.fork == nil && m.notPooled(cfg) == "",
	}
}
