package engine

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

// Each capability a provider claims comes with the operations behind it,
// and it claims none it cannot do: box.Images, box.Egress and box.Copier
// trust the flags.
func TestCapsMatchOperations(t *testing.T) {
	for _, rt := range []Runtime{Docker, {Bin: "podman"}, Kubectl("", "")} {
		p := rt.Provider(&runner.Exec{})
		caps := p.Caps()
		_, images := p.(box.ImageStore)
		_, egress := p.(box.EgressHost)
		_, copier := p.(box.VolumeCopier)
		if caps.Images != images || caps.EgressProxy != egress || caps.VolumeCopy != copier {
			t.Errorf("%s: caps %+v, but implements images=%v egress=%v copy=%v", rt.Bin, caps, images, egress, copier)
		}
	}
	if Docker.Provider(&runner.Exec{}).Caps() != (box.Caps{Freeze: true, Images: true, EgressProxy: true, VolumeCopy: true}) {
		t.Error("an engine can do everything")
	}
	if Kubectl("", "").Provider(&runner.Exec{}).Caps() != (box.Caps{}) {
		t.Error("a cluster stops rather than freezes, keeps no images, and has no proxy or volume copy")
	}
}
