// Package replay records real traffic and replays it: a recording reverse proxy
// that strips secrets before anything is written, readers for msgload recordings,
// HAR 1.2 files and vegeta JSON targets, a vegeta.Pacer that sends each request at
// its recorded offset scaled by a speed, and the rewriting that makes a recording
// safe to send again (fresh credentials, mapped clients, callbacks to the sink).
package replay
