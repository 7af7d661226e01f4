// Command k8spause is the pause (sandbox) container of the local test
// Kubernetes cluster (scripts/k8s). Every pod needs one to hold its
// namespaces, and the usual registry.k8s.io/pause image cannot be pulled:
// there is no registry here. scripts/k8s/up.sh builds this statically and
// imports it as an image. It sleeps until SIGTERM or SIGINT, then exits 0,
// and reaps any zombie children it inherits as the pod's PID 1.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
