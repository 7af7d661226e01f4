//go:build linux && !amd64 && !arm64

package search

import "syscall"

func Fstatat(_ int, dir string, name string, st *syscall.Stat_t) error {
	return syscall.Lstat(dir+"/"+name, st)
}
