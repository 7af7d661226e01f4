package box

// State is a box's lifecycle state in docker's words: "running",
// "paused", "exited", "created", "restarting", "removing" or "dead".
type State string

// Inspection is what Inspect reports about one container.
type Inspection struct {
	State  State             `json:"state"`
	Labels map[string]string `json:"labels"`
	// ExitCode is PID 1's of an exited box.
	ExitCode int `json:"exit"`
}

// Summary is one box as a provider lists it (a row of `docker ps`).
type Summary struct {
	ID      string            `json:"id"`
	Name    string            `json:"name"`
	State   State             `json:"state"`
	Status  string            `json:"status"`
	Created string            `json:"created"`
	Labels  map[string]string `json:"labels"`
}

// ImageInfo is what one image inspect tells about an image.
type ImageInfo struct {
	// Platform is "os/architecture" (linux/amd64).
	Platform string
	// ID is the content-addressed id (sha256:...): what a setup cache
	// entry was made from, whatever tag names it.
	ID string
}

// ValidID reports whether id is an engine's full container id: 64
// lowercase hex digits, as docker and podman give them.
func ValidID(id string) bool {
	if len(id) != 64 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
