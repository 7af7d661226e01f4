package hostrepo

import "github.com/litterbox-dev/litterbox/internal/audit"

// AuditPath is the repository's audit log, JSON lines under the git dir.
func (r *Repo) AuditPath() string { return r.Layout().Audit() }

// AppendAudit adds one entry to the audit log, masking every secret value
// this process has seen.
func (r *Repo) AppendAudit(e audit.Entry) error {
	return audit.Log{Path: r.AuditPath()}.Append(e, r.Secrets.Seen())
}

// ReadAudit returns the audit log's entries, only those of one sandbox when
// name is set.
func (r *Repo) ReadAudit(name string) ([]audit.Entry, error) {
	slug := ""
	if name != "" {
		var err error
		if slug, err = r.Resolve(name); err != nil {
			return nil, err
		}
	}
	return audit.Log{Path: r.AuditPath()}.Read(slug)
}
