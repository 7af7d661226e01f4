//go:build linux && !amd64 && !arm64

package helper

import "syscall"

func fstatat(_ int, dir string, name string, st *syscall.Stat_t) error {
	return syscall.Lstat(dir+"/"+name, st)
}
