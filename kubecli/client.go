// Package kubecli runs sandboxes on a Kubernetes cluster through the kubectl
// command line, as dockercli does through docker: every operation is an
// argument vector run by a runner.Runner, so a logged line can be pasted into
// a shell and tests can record and replay transcripts. It links no
// client-go.
//
// A sandbox's container is two objects: a ConfigMap holding the pod's
// manifest and the labels (what `docker create` keeps), and the Pod made from
// it (what `docker start` runs). A pod cannot be frozen, so Pause deletes the
// pod and keeps the ConfigMap and the claim, and Start makes the pod again.
// A named volume is a PersistentVolumeClaim, or an emptyDir where the
// cluster has no default storage class.
package kubecli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

// Client is a box.Provider.
var _ box.Provider = (*Client)(nil)

// Client runs one kubectl binary against one context and namespace.
type Client struct {
	Bin string
	// Global options go before every subcommand: --context, --namespace.
	Global []string
	Runner runner.Runner
	// Poll is how often a pod's state is asked while waiting for it.
	Poll time.Duration
	// StartTimeout bounds the wait for a pod to run.
	StartTimeout time.Duration

	// objects are the aliases this process resolved (claim.go).
	objects objects

	classOnce sync.Once
	class     string
	classErr  error
}

// New returns a client for kubectl with the given context and namespace
// (empty: kubectl's current ones).
func New(bin, kubeContext, namespace string, r runner.Runner) *Client {
	c := &Client{Bin: bin, Runner: r, Poll: 250 * time.Millisecond, StartTimeout: 3 * time.Minute}
	if kubeContext != "" {
		c.Global = append(c.Global, "--context", kubeContext)
	}
	if namespace != "" {
		c.Global = append(c.Global, "--namespace", namespace)
	}
	return c
}

func (c *Client) cmd(cmd runner.Cmd) runner.Cmd {
	cmd.Name = c.Bin
	cmd.Args = append(slices.Clone(c.Global), cmd.Args...)
	return cmd
}

func (c *Client) run(ctx context.Context, cmd runner.Cmd) (runner.Result, error) {
	res, err := c.Runner.Run(ctx, c.cmd(cmd))
	return res, classify(err)
}

func (c *Client) args(ctx context.Context, args ...string) (runner.Result, error) {
	return c.run(ctx, runner.Cmd{Args: args})
}

// create makes obj (a manifest) from stdin; one that exists is an
// ErrNameInUse.
func (c *Client) create(ctx context.Context, obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	// The log shows the manifest piped in, so the line can be pasted.
	args := []string{"create", "-f", "-"}
	shown := &runner.Shown{Cmd: c.cmd(runner.Cmd{Args: args}), Input: data, HasInput: true}
	_, err = c.run(ctx, runner.Cmd{Args: args, Stdin: bytes.NewReader(data), Shown: shown, StdinKey: manifestKey})
	return err
}

// get reads one object; a missing one is errNotFound.
func (c *Client) get(ctx context.Context, kind, name string, into any) error {
	res, err := c.args(ctx, "get", kind, name, "--output", "json")
	if err != nil {
		return err
	}
	return decode(res.Stdout, into)
}

func decode(data []byte, into any) error {
	if err := json.Unmarshal(bytes.TrimSpace(data), into); err != nil {
		return fmt.Errorf("cannot read kubectl output %q: %w", agenttext.FirstLine(string(data)), err)
	}
	return nil
}

// deleted deletes the named objects (kind/name), waiting for them to go, and
// says whether any existed. A pod gets a grace period of 1 s: its PID 1 (the
// helper) ignores SIGTERM, which the sandbox user could send it too, so the
// kubelet's SIGKILL ends it.
func (c *Client) deleted(ctx context.Context, objs ...string) (bool, error) {
	args := append([]string{"delete", "--ignore-not-found", "--grace-period=1", "--output", "name"}, objs...)
	res, err := c.args(ctx, args...)
	return len(bytes.TrimSpace(res.Stdout)) > 0, err
}

// Versions returns kubectl's version and the API server's.
func (c *Client) Versions(ctx context.Context) (client, server string, err error) {
	res, err := c.args(ctx, "version", "--output", "json")
	var v struct {
		Client struct {
			GitVersion string `json:"gitVersion"`
		} `json:"clientVersion"`
		Server struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if derr := json.Unmarshal(res.Stdout, &v); derr != nil && err == nil {
		err = derr
	}
	return v.Client.GitVersion, v.Server.GitVersion, err
}

// Endpoint names the cluster's API server. It is never a docker address, so
// ports are reached through `kubectl port-forward` on this machine.
func (c *Client) Endpoint(ctx context.Context) (string, error) {
	res, err := c.args(ctx, "config", "view", "--minify", "--output", "jsonpath={.clusters[0].cluster.server}")
	return "kubernetes " + strings.TrimSpace(string(res.Stdout)), err
}

// Caps: a started sandbox is a new pod (nothing outside its claim
// survived, the helper included); the network is a NetworkPolicy, so
// there is no egress proxy; and no container can borrow another's volumes.
// A pod made ahead takes a sandbox's name through an alias (claim.go).
func (c *Client) Caps() box.Caps { return box.Caps{Pool: true} }

// classify maps kubectl's failures onto the error kinds of box, so the
// sandbox core tells them apart the same way on every runtime.
func classify(err error) error { return box.Classify(err, patterns) }

var patterns = []box.Pattern{
	{Kind: box.ErrEngineUnreachable, Needs: []string{"connection refused"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"unable to connect to the server"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"the connection to the server"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"no configuration has been provided"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"context was not found"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"i/o timeout"}},
	{Kind: errNotFound, Needs: []string{"(notfound)"}},
	{Kind: box.ErrNameInUse, Needs: []string{"(alreadyexists)"}},
}

// errNotFound is kubectl's NotFound, which each caller turns into the kind
// it means (no such container, no such volume).
var errNotFound = errors.New("not found")

// manifestKey is what a transcript matches a create's manifest by: its kind
// and name (the rest holds paths of the recording machine).
func manifestKey(data []byte) string {
	var o struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &o)
	return o.Kind + " " + o.Metadata.Name
}
