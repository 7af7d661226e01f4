package hostrepo

// SandboxIDs are the uid and gid a sandbox was made for: its files belong to
// that user, whatever the config says now.
func (r *Repo) SandboxIDs(slug string) (uid, gid int, err error) {
	c := r.Config
	if rec, err := r.Store().Load(slug); err == nil && rec != nil && rec.User != "" {
		c.User = rec.User
	}
	return c.IDs()
}
