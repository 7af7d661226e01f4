package kubecli

import (
	"context"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
)

// Checks are doctor's checks of a Kubernetes cluster: the context and
// namespace, every permission the provider uses, where /src would live, and
// whether network "none" is enforced.
func (c *Client) Checks(ctx context.Context) []box.Check {
	var checks []box.Check
	kctx, ns, err := c.Context(ctx)
	if err != nil {
		return []box.Check{{Name: "context", Status: box.CheckFail, Detail: agenttext.FirstLine(err.Error()), Fix: "kubectl config use-context NAME, or --context"}}
	}
	checks = append(checks, box.Check{Name: "context", Status: box.CheckOK, Detail: "context " + kctx + ", namespace " + ns})
	missing, err := c.Missing(ctx)
	switch {
	case err != nil:
		checks = append(checks, box.Check{Name: "permissions", Status: box.CheckFail, Detail: agenttext.FirstLine(err.Error())})
	case len(missing) > 0:
		var names []string
		for _, a := range missing {
			names = append(names, a.Verb+" "+a.Resource)
		}
		checks = append(checks, box.Check{Name: "permissions", Status: box.CheckFail, Detail: "not allowed in namespace " + ns + ": " + strings.Join(names, ", "),
			Fix: "ask for a Role granting them (kubectl auth can-i VERB RESOURCE checks one)"})
	default:
		checks = append(checks, box.Check{Name: "permissions", Status: box.CheckOK, Detail: "all " + strconv.Itoa(len(Needed)) + " verbs Litterbox uses are allowed in namespace " + ns})
	}
	class, err := c.StorageClass(ctx)
	switch {
	case err != nil:
		checks = append(checks, box.Check{Name: "storage", Status: box.CheckFail, Detail: agenttext.FirstLine(err.Error())})
	case class == "":
		checks = append(checks, box.Check{Name: "storage", Status: box.CheckWarn, Detail: "no default storage class: /src is an emptyDir that goes with the pod, so pause is refused",
			Fix: "mark a storage class as the default (storageclass.kubernetes.io/is-default-class)"})
	default:
		checks = append(checks, box.Check{Name: "storage", Status: box.CheckOK, Detail: "/src is a claim of the default storage class " + class})
	}
	enf, err := c.PolicyEnforcer(ctx)
	switch {
	case err != nil:
		checks = append(checks, box.Check{Name: "network policy", Status: box.CheckWarn, Detail: "cannot tell whether NetworkPolicy is enforced: " + agenttext.FirstLine(err.Error())})
	case enf == "":
		checks = append(checks, box.Check{Name: "network policy", Status: box.CheckWarn,
			Detail: `no network plugin known to enforce NetworkPolicy runs in kube-system: network "none" is a policy nothing applies, so sandboxes reach the pod network`,
			Fix:    "run a plugin that enforces NetworkPolicy (Calico, Cilium, kube-router, Antrea)"})
	default:
		checks = append(checks, box.Check{Name: "network policy", Status: box.CheckOK, Detail: `enforced by ` + enf + `: network "none" is a deny-all NetworkPolicy`})
	}
	return checks
}
