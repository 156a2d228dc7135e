// Package yamlguard bounds YAML text before a YAML library parses it: the
// bytes read (counted while reading, never taken from a file's stat size),
// the nesting depth (block indentation levels plus flow [ and { levels) and
// the number of nodes. The YAML library msgload uses (goccy/go-yaml) has no
// bound of its own in its scanner and parser, and its cost grows with the
// square of the nesting: 40 KB of nested flow sequences took 670 MB. The
// scenario loader and the simulator's configuration both call it.
package yamlguard
