//go:build linux

package search

import (
	"syscall"
	"unsafe"
)

// fstatat is lstat of name relative to an open directory, which spares the
// kernel a walk from / for every entry; amd64's syscall package does not
// export it.
func Fstatat(dirfd int, _ string, name string, st *syscall.Stat_t) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	const atSymlinkNofollow = 0x100
	_, _, e := syscall.Syscall6(syscall.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), atSymlinkNofollow, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
