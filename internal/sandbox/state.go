package sandbox

// sandboxIDs are the uid and gid a sandbox was made for: its files belong to
// that user, whatever the config says now.
func (m *Manager) sandboxIDs(slug string) (uid, gid int, err error) {
	c := m.Config
	if rec, err := m.store().Load(slug); err == nil && rec != nil && rec.User != "" {
		c.User = rec.User
	}
	return c.IDs()
}
