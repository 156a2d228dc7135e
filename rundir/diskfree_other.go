//go:build !(linux || darwin)

package rundir

import "errors"

// FreeBytes is not known on this system: a run keeps no disk reserve here.
func FreeBytes(string) (uint64, error) { return 0, errors.ErrUnsupported }
