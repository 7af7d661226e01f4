package protocol

// The helper's read-only tools print JSON; these are its shapes.

// ReadOut is what `read` prints.
type ReadOut struct {
	Content    string `json:"content"`
	Lines      int    `json:"lines"`
	TotalLines int    `json:"total_lines"`
	// Binary: the file is not text (a NUL among its first bytes, or an
	// image), so no lines were read; MIME is its sniffed type and Size
	// its size. An older helper leaves them out.
	Binary bool   `json:"binary,omitempty"`
	MIME   string `json:"mime,omitempty"`
	Size   int64  `json:"size,omitempty"`
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

// Probe is what `probe` reports about the sandbox it runs in.
type Probe struct {
	Version   int    `json:"version"`
	Arch      string `json:"arch"`
	Shell     bool   `json:"shell"`
	TmpWrite  bool   `json:"tmp_writable"`
	TmpExec   bool   `json:"tmp_exec"`
	SrcWrite  bool   `json:"src_writable"`
	User      int    `json:"uid"`
	TmpDetail string `json:"tmp_detail,omitempty"`
	// Kernel is the release the sandbox sees (uname -r): gVisor's says
	// 4.4.0.
	Kernel string `json:"kernel,omitempty"`
	// Program is where the program asked about is in the sandbox's PATH,
	// "" when it is not there (see Path).
	Program string `json:"program,omitempty"`
	Path    string `json:"path,omitempty"`
}
