//go:build linux

package search

import "syscall"

func Fstatat(dirfd int, _ string, name string, st *syscall.Stat_t) error {
	const atSymlinkNofollow = 0x100
	return syscall.Fstatat(dirfd, name, st, atSymlinkNofollow)
}
