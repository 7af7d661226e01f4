package sandbox

import (
	"context"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/kubecli"
)

// kubeChecks are doctor's checks of a Kubernetes cluster: the context and
// namespace, every permission the provider uses, where /src would live, and
// whether network "none" is enforced.
func kubeChecks(ctx context.Context, kc *kubecli.Client) []Check {
	var checks []Check
	kctx, ns, err := kc.Context(ctx)
	if err != nil {
		return []Check{{Name: "context", Status: CheckFail, Detail: oneLineErr(err), Fix: "kubectl config use-context NAME, or --context"}}
	}
	checks = append(checks, Check{Name: "context", Status: CheckOK, Detail: "context " + kctx + ", namespace " + ns})
	missing, err := kc.Missing(ctx)
	switch {
	case err != nil:
		checks = append(checks, Check{Name: "permissions", Status: CheckFail, Detail: oneLineErr(err)})
	case len(missing) > 0:
		var names []string
		for _, a := range missing {
			names = append(names, a.Verb+" "+a.Resource)
		}
		checks = append(checks, Check{Name: "permissions", Status: CheckFail, Detail: "not allowed in namespace " + ns + ": " + strings.Join(names, ", "),
			Fix: "ask for a Role granting them (kubectl auth can-i VERB RESOURCE checks one)"})
	default:
		checks = append(checks, Check{Name: "permissions", Status: CheckOK, Detail: "all " + strconv.Itoa(len(kubecli.Needed)) + " verbs Litterbox uses are allowed in namespace " + ns})
	}
	class, err := kc.StorageClass(ctx)
	switch {
	case err != nil:
		checks = append(checks, Check{Name: "storage", Status: CheckFail, Detail: oneLineErr(err)})
	case class == "":
		checks = append(checks, Check{Name: "storage", Status: CheckWarn, Detail: "no default storage class: /src is an emptyDir that goes with the pod, so pause is refused",
			Fix: "mark a storage class as the default (storageclass.kubernetes.io/is-default-class)"})
	default:
		checks = append(checks, Check{Name: "storage", Status: CheckOK, Detail: "/src is a claim of the default storage class " + class})
	}
	enf, err := kc.PolicyEnforcer(ctx)
	switch {
	case err != nil:
		checks = append(checks, Check{Name: "network policy", Status: CheckWarn, Detail: "cannot tell whether NetworkPolicy is enforced: " + oneLineErr(err)})
	case enf == "":
		checks = append(checks, Check{Name: "network policy", Status: CheckWarn,
			Detail: `no network plugin known to enforce NetworkPolicy runs in kube-system: network "none" is a policy nothing applies, so sandboxes reach the pod network`,
			Fix:    "run a plugin that enforces NetworkPolicy (Calico, Cilium, kube-router, Antrea)"})
	default:
		checks = append(checks, Check{Name: "network policy", Status: CheckOK, Detail: `enforced by ` + enf + `: network "none" is a deny-all NetworkPolicy`})
	}
	return checks
}
