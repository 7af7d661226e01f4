package sandbox

import "github.com/litterbox-dev/litterbox/internal/audit"

// AuditPath is the repository's audit log, JSON lines under the git dir.
func (m *Manager) AuditPath() string { return m.layout().Audit() }

// AppendAudit adds one entry to the audit log, masking every secret value
// this process has seen.
func (m *Manager) AppendAudit(e audit.Entry) error {
	return audit.Log{Path: m.AuditPath()}.Append(e, m.secrets.Seen())
}

// ReadAudit returns the audit log's entries, only those of one sandbox when
// name is set.
func (m *Manager) ReadAudit(name string) ([]audit.Entry, error) {
	slug := ""
	if name != "" {
		var err error
		if slug, err = m.resolve(name); err != nil {
			return nil, err
		}
	}
	return audit.Log{Path: m.AuditPath()}.Read(slug)
}
