package box

// Caps are what tell runtimes apart. The core asks for a capability, never
// for a runtime by name, so a new provider (an isolation level, a remote
// engine) says what it can do here and the core follows.
type Caps struct {
	// Freeze: Pause freezes a box's processes in place and Unpause thaws
	// them (docker pause). Without it a pause stops the box, and Start
	// makes it anew from its volumes: its processes and everything outside
	// its volumes are gone, the helper included, so the core delivers the
	// helper again.
	Freeze bool
	// Images: the engine keeps images to inspect, pull, read and build
	// before a box is made (ImageStore).
	Images bool
	// EgressProxy: a box on network "none" reaches its allowlist through
	// Litterbox's egress proxy, a second box beside it (TmpfsVolume,
	// DisconnectNetwork, Logs), and a setup command can have a network of
	// its own. Without it the provider enforces Spec.Allow itself, for the
	// box's whole life.
	EgressProxy bool
	// VolumeCopy: a box can borrow another's volumes to copy them
	// (StartAttached), and images have ids to key on: the setup cache.
	VolumeCopy bool
	// Pool: a box made ahead under a name of its own can take a sandbox's
	// name when a create claims it, atomically (Claimer).
	Pool bool
	// IDs: Create returns the box's id, and List each box's, which the
	// engine gives no other box and which names the box as its name does
	// (docker exec ID). A box addressed by the id its making returned is
	// the one made: no look at its labels is needed to know it is ours.
	IDs bool
	// Overlay: a volume can be made over another, copy on write
	// (Overlayer): a sandbox's /src over a tree made once and shared.
	Overlay bool
}
