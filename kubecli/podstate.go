package kubecli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

// podState is a container's record and pod.
type podState struct {
	rec   object
	pod   *podObject
	state box.State
	// obj is the name of the record and pod: the container's name, or,
	// for a box a claim gave this name, the name it was made under.
	obj string
	// dangling: the name is an alias no record answers to (a claim that
	// never finished); elsewhere: the name is a record a claim gave
	// another name.
	dangling, elsewhere bool
}

type podObject struct {
	Metadata meta `json:"metadata"`
	Status   struct {
		Phase      string `json:"phase"`
		Reason     string `json:"reason"`
		Message    string `json:"message"`
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"conditions"`
		ContainerStatuses []struct {
			State map[string]struct {
				Reason   string `json:"reason"`
				Message  string `json:"message"`
				ExitCode *int   `json:"exitCode"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

// state reads the record and pod of the container called name: one get,
// and a second when name is an alias (claim.go) this process has not
// resolved before.
func (c *Client) state(ctx context.Context, name string) (podState, error) {
	if obj, _ := c.objects.of(name); obj != name {
		st, of, err := c.objectState(ctx, obj, name)
		switch {
		case err == nil && of == obj && st.rec.Metadata.Annotations[annoName] == name:
			return st, nil
		case err != nil && !errors.Is(err, box.ErrNotFound):
			return st, err
		}
		c.objects.forget(name)
	}
	st, _, err := c.objectState(ctx, name, "")
	if err != nil {
		return st, err
	}
	if target := aliasOf(st.rec); target != "" {
		if st, _, err = c.objectState(ctx, target, ""); err != nil {
			if errors.Is(err, box.ErrNotFound) {
				st.dangling = true
			}
			return st, noSuch(name, err)
		}
		if st.rec.Metadata.Annotations[annoName] != name {
			return podState{dangling: true}, noSuch(name, nil)
		}
		c.objects.remember(name, target)
		return st, nil
	}
	if other := st.rec.Metadata.Annotations[annoName]; other != "" && other != name {
		// Claimed: it answers to other now.
		return podState{elsewhere: true}, noSuch(name, nil)
	}
	c.objects.remember(name, name)
	return st, nil
}

// aliasOf is the record an alias stands for, "" for a record: an alias is
// a ConfigMap with no labels and no pod, which no record ever is.
func aliasOf(rec object) string {
	if len(rec.Metadata.Labels) > 0 || rec.Data[podKey] != "" {
		return ""
	}
	return rec.Metadata.Annotations[annoAlias]
}

// noSuch is the error for a name no container answers to.
func noSuch(name string, err error) error {
	if err != nil && !errors.Is(err, box.ErrNotFound) {
		return err
	}
	return &box.Error{Kind: box.ErrNotFound, Err: fmt.Errorf("no such container: %s", name)}
}

// objectState reads the record and pod named obj in one call, and, when
// alias is not "", the alias of that name, returning the name of the
// record it stands for.
func (c *Client) objectState(ctx context.Context, obj, alias string) (st podState, of string, err error) {
	args := []string{"get", "configmap/" + obj, "pod/" + obj}
	if alias != "" {
		args = append(args, "configmap/"+alias)
	}
	res, err := c.args(ctx, append(args, "--ignore-not-found", "--output", "json")...)
	if err != nil {
		return podState{}, "", err
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if len(res.Stdout) > 0 {
		if err := decode(res.Stdout, &list); err != nil {
			return podState{}, "", err
		}
	}
	found := false
	for _, raw := range list.Items {
		var kind struct{ Kind string }
		_ = json.Unmarshal(raw, &kind)
		switch kind.Kind {
		case "ConfigMap":
			var rec object
			if err := json.Unmarshal(raw, &rec); err != nil {
				return podState{}, "", err
			}
			if rec.Metadata.Name == obj {
				st.rec, found = rec, true
			} else {
				of = aliasOf(rec)
			}
		case "Pod":
			st.pod = &podObject{}
			if err := json.Unmarshal(raw, st.pod); err != nil {
				return podState{}, "", err
			}
		}
	}
	if !found {
		return podState{}, of, noSuch(obj, nil)
	}
	st.state, st.obj = stateOf(st.pod), obj
	return st, of, nil
}

// stateOf is a pod's state in docker's words: no pod is a stopped
// container.
func stateOf(p *podObject) box.State {
	switch {
	case p == nil:
		return "exited"
	case p.Metadata.DeletionTimestamp != "":
		return "removing"
	case p.Status.Phase == "Running":
		for _, cs := range p.Status.ContainerStatuses {
			if _, ok := cs.State["running"]; !ok {
				return "exited"
			}
		}
		return "running"
	case p.Status.Phase == "Pending":
		return "created"
	}
	return "exited"
}

// exitCode is the exit status of a pod's ended first process, as docker
// keeps a stopped container's: the idle stop is told by it.
func exitCode(p *podObject) (int, bool) {
	if p == nil {
		return 0, false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t, ok := cs.State["terminated"]; ok && t.ExitCode != nil {
			return *t.ExitCode, true
		}
	}
	return 0, false
}

// statusLine is a pod's state as docker ps words it for an exited
// container ("Exited (75)"), else its state.
func statusLine(p *podObject) string {
	st := stateOf(p)
	if code, ok := exitCode(p); ok && st == "exited" {
		return fmt.Sprintf("Exited (%d)", code)
	}
	return string(st)
}

// Inspect returns the state and labels of one container.
func (c *Client) Inspect(ctx context.Context, name string) (box.Inspection, error) {
	st, err := c.state(ctx, name)
	if err != nil {
		return box.Inspection{}, err
	}
	code, _ := exitCode(st.pod)
	return box.Inspection{State: st.state, Labels: st.rec.Metadata.Annotations, ExitCode: code}, nil
}

// waitRunning watches the pod (one kubectl get --watch, so a transcript
// holds one command however long the start takes) until it runs, failing at
// once on what will not mend by waiting (no such image, no shell to start
// with).
func (c *Client) waitRunning(ctx context.Context, name string) error {
	wctx, cancel := context.WithTimeout(ctx, c.StartTimeout)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := c.run(wctx, runner.Cmd{Args: []string{"get", "pod", name, "--watch", "--output", "json"}, Stdout: pw})
		pw.CloseWithError(errOrEOF(err))
		done <- err
	}()
	var last podObject
	decided, verdict := watchPod(pr, name, &last)
	// The watch never ends by itself: stop it, and drain what it still
	// writes (a replayed transcript writes all it recorded).
	timedOut := wctx.Err() != nil
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	werr := <-done
	switch {
	case decided:
		return verdict
	case ctx.Err() != nil:
		return ctx.Err()
	case timedOut:
		return fmt.Errorf("pod %s did not start within %s (phase %s%s)", name, c.StartTimeout, last.Status.Phase, orDash(pending(&last)))
	case werr != nil:
		return werr
	}
	return fmt.Errorf("watching pod %s: %w", name, verdict)
}

// watchPod reads the pod's states until one decides: nil for running, an
// error for a pod that cannot start. decided is false when the stream ended
// first (err says how); last is the last state read.
func watchPod(r io.Reader, name string, last *podObject) (decided bool, err error) {
	dec := json.NewDecoder(r)
	for {
		var p podObject
		if err := dec.Decode(&p); err != nil {
			return false, err
		}
		*last = p
		if stateOf(&p) == "running" {
			return true, nil
		}
		if why := podFailure(&p); why != "" {
			return true, fmt.Errorf("pod %s cannot start: %s", name, why)
		}
	}
}

func errOrEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

func orDash(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// podFailure names what keeps a pod from running for good.
func podFailure(p *podObject) string {
	if p.Status.Phase == "Failed" || p.Status.Phase == "Succeeded" {
		for _, cs := range p.Status.ContainerStatuses {
			if t, ok := cs.State["terminated"]; ok {
				return shellHint(fmt.Sprintf("its first process exited (%s%s)", t.Reason, orDash(t.Message)))
			}
		}
		return "it ended (" + p.Status.Phase + orDash(p.Status.Message) + ")"
	}
	for _, cs := range p.Status.ContainerStatuses {
		w, ok := cs.State["waiting"]
		if !ok {
			continue
		}
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName":
			return "its image cannot be pulled (" + w.Reason + orDash(w.Message) + ")"
		case "CreateContainerError", "CreateContainerConfigError", "RunContainerError", "StartError":
			return shellHint(w.Reason + orDash(w.Message))
		}
	}
	return ""
}

// shellHint explains a start that failed for want of a shell: the pod's
// first process is /bin/sh waiting for the helper.
func shellHint(msg string) string {
	if strings.Contains(msg, "/bin/sh") {
		return "the image has no /bin/sh, which the kubernetes runtime needs to start its helper: " + msg
	}
	return msg
}

// pending says why a pod waits: the scheduler's message (no node, an
// unbound claim) or the pod's own.
func pending(p *podObject) string {
	for _, c := range p.Status.Conditions {
		if c.Status == "False" && c.Message != "" {
			return c.Message
		}
	}
	return p.Status.Message
}
