package kubecli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/litterbox-dev/litterbox/runner"
)

// Access is one thing Litterbox does in the namespace: a verb on a resource.
type Access struct{ Verb, Resource string }

// Needed is every verb on every resource the provider uses.
var Needed = []Access{
	{"create", "pods"}, {"get", "pods"}, {"list", "pods"}, {"watch", "pods"}, {"delete", "pods"},
	{"create", "pods/exec"}, {"create", "pods/portforward"},
	{"create", "configmaps"}, {"get", "configmaps"}, {"list", "configmaps"}, {"delete", "configmaps"}, {"patch", "configmaps"},
	{"create", "persistentvolumeclaims"}, {"get", "persistentvolumeclaims"}, {"list", "persistentvolumeclaims"}, {"delete", "persistentvolumeclaims"},
	{"create", "networkpolicies.networking.k8s.io"}, {"delete", "networkpolicies.networking.k8s.io"},
	{"list", "storageclasses.storage.k8s.io"},
}

// Missing asks `kubectl auth can-i` for each access in Needed and returns
// those refused.
func (c *Client) Missing(ctx context.Context) ([]Access, error) {
	var missing []Access
	for _, a := range Needed {
		res, err := c.args(ctx, "auth", "can-i", a.Verb, a.Resource)
		answer := strings.TrimSpace(string(res.Stdout))
		if ee, ok := runner.AsExit(err); ok && ee.Result.ExitCode == 1 {
			answer, err = strings.TrimSpace(string(ee.Result.Stdout)), nil
		}
		if err != nil {
			return nil, err
		}
		if answer != "yes" {
			missing = append(missing, a)
		}
	}
	return missing, nil
}

// Context names the context and namespace kubectl uses.
func (c *Client) Context(ctx context.Context) (kubeContext, namespace string, err error) {
	res, err := c.args(ctx, "config", "view", "--minify", "--output", "jsonpath={.contexts[0].name} {.contexts[0].context.namespace}")
	if err != nil {
		return "", "", err
	}
	kubeContext, namespace, _ = strings.Cut(strings.TrimSpace(string(res.Stdout)), " ")
	for i, g := range c.Global {
		if g == "--namespace" && i+1 < len(c.Global) {
			namespace = c.Global[i+1]
		}
	}
	if namespace == "" {
		namespace = "default"
	}
	if kubeContext == "" {
		return "", "", errors.New("kubectl has no current context")
	}
	return kubeContext, namespace, nil
}

// enforcers are network plugins known to enforce NetworkPolicy, by the
// names of their pods in kube-system.
var enforcers = regexp.MustCompile(`^pod/(calico-node|cilium|kube-router|antrea-agent|weave-net|canal|kube-ovn-cni)`)

// PolicyEnforcer names the network plugin that enforces the sandbox's
// NetworkPolicy, "" when none known runs in kube-system: then network
// "none" is a policy object nothing applies.
func (c *Client) PolicyEnforcer(ctx context.Context) (string, error) {
	res, err := c.run(ctx, runner.Cmd{Args: []string{"get", "pods", "--namespace", "kube-system", "--output", "name"}})
	if err != nil {
		return "", fmt.Errorf("listing kube-system's pods: %w", err)
	}
	for _, line := range strings.Fields(string(res.Stdout)) {
		if m := enforcers.FindStringSubmatch(line); m != nil {
			return m[1], nil
		}
	}
	return "", nil
}
