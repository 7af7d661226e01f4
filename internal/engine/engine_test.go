package engine

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

// Each capability a provider claims comes with the operations behind it,
// and it claims none it cannot do: box.Images, box.Egress, box.Copier,
// box.PoolOf and box.Overlays trust the flags.
func TestCapsMatchOperations(t *testing.T) {
	for _, rt := range []Runtime{Docker, {Bin: "podman"}, Kubectl("", "")} {
		p := rt.Provider(&runner.Exec{})
		caps := p.Caps()
		_, images := p.(box.ImageStore)
		_, egress := p.(box.EgressHost)
		_, copier := p.(box.VolumeCopier)
		_, claimer := p.(box.Claimer)
		_, overlays := p.(box.Overlayer)
		if caps.Images != images || caps.EgressProxy != egress || caps.VolumeCopy != copier || caps.Pool != claimer || caps.Overlay != overlays {
			t.Errorf("%s: caps %+v, but implements images=%v egress=%v copy=%v claim=%v overlay=%v", rt.Bin, caps, images, egress, copier, claimer, overlays)
		}
	}
	if Docker.Provider(&runner.Exec{}).Caps() != (box.Caps{Freeze: true, Images: true, EgressProxy: true, VolumeCopy: true, Pool: true, IDs: true, Overlay: true}) {
		t.Error("an engine can do everything")
	}
	if Kubectl("", "").Provider(&runner.Exec{}).Caps() != (box.Caps{Pool: true}) {
		t.Error("a cluster stops rather than freezes, keeps no images, has no proxy or volume copy, and execs by name; it claims pool entries by alias")
	}
}
