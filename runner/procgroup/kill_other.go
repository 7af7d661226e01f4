//go:build !linux

package procgroup

// ReadTable is empty outside Linux: there is no /proc, and the helper
// never runs there.
func ReadTable() Table { return Table{} }

func killProc(Proc) {}

func hasMarker(int, string) bool { return false }
