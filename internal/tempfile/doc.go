// Package tempfile makes the scratch files msgload's bounded-memory parts
// spill to (the report's sorted spills, the sink's frozen correlation
// table, the simulator's settled messages): created and unlinked at once,
// so that the space comes back when the file is closed — or when its process
// dies, even by SIGKILL (the live analysis's child is killed when its run
// stops; a soak's is killed every time a checkpoint is still running then).
// A named temporary file removed only on close stayed behind in $TMPDIR
// each time.
package tempfile
