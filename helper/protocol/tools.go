package protocol

// The helper's read-only tools print JSON; these are its shapes.

// ReadOut is what `read` prints.
type ReadOut struct {
	Content    string `json:"content"`
	Lines      int    `json:"lines"`
	TotalLines int    `json:"total_lines"`
}

// LsEntry is one entry `ls` prints, its path relative to the listed
// directory (or the path itself when a file was listed).
type LsEntry struct {
	Path string `json:"path"`
	Type string `json:"type"` // file, dir, symlink, other
	Size int64  `json:"size"`
}

// Match is one line `grep` prints.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}
