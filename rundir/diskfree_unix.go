//go:build linux || darwin

package rundir

import "syscall"

// FreeBytes is the space free to an unprivileged writer on the file system
// that holds path (statfs: the available blocks, not the free ones, which
// count the blocks kept for root).
func FreeBytes(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
