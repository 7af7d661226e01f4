// Package engine chooses the provider a command drives: the one place that
// knows which runtimes exist. Everything else speaks to a box.Provider.
package engine

import (
	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/kubecli"
	"github.com/litterbox-dev/litterbox/runner"
)

// Runtime is the container engine CLI to drive.
type Runtime struct {
	Bin string // docker, podman, or a path to one; kubectl for Kubernetes
	// Global options for every command, e.g. --context NAME or --host URL.
	Global []string
	// Kubernetes drives a cluster through kubectl instead of an engine.
	Kubernetes bool
}

// Kubectl is the Kubernetes runtime on kubectl's context and namespace
// (empty: its current ones).
func Kubectl(kubeContext, namespace string) Runtime {
	rt := Runtime{Bin: "kubectl", Kubernetes: true}
	if kubeContext != "" {
		rt.Global = append(rt.Global, "--context", kubeContext)
	}
	if namespace != "" {
		rt.Global = append(rt.Global, "--namespace", namespace)
	}
	return rt
}

// Docker is the default runtime.
var Docker = Runtime{Bin: "docker"}

// Provider is the runtime's provider, running its commands through r.
func (rt Runtime) Provider(r runner.Runner) box.Provider {
	if rt.Kubernetes {
		c := kubecli.New(rt.Bin, "", "", r)
		c.Global = rt.Global
		return c
	}
	c := dockercli.New(rt.Bin, r)
	c.Global = rt.Global
	return c
}
