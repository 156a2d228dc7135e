// Package sink is the callback receiver of msgload: it receives what the
// messaging and notification services post back — messaging status callbacks
// (POST /callback), incoming messages (POST /incoming) and notification
// webhooks (POST /webhook) — and keeps every call, malformed and unauthorized
// ones included, as one event (rundir.Event) of an append-only JSON-lines log.
//
// A call is answered 2xx only once its event is durable: written and fsynced
// as Options.Fsync says (a group commit by default; fsyncNone only hands it
// to the OS). After a failed or short write the log is cut back to its last
// complete line, and while that cannot be done every call gets 500 and
// /healthz 503. The sender then retries, so an acknowledged event is never
// lost and a refused one is never half written.
//
// Each event is correlated with the send it belongs to from the tag the
// attacker carried in trackData (messaging) or externalId (notifications), so
// delivery latency, duplicates and the ending state of a message (by the
// channel chain the tag carries) are measured from the events alone, with no
// state shared with the attacker.
// Counts and latencies are exported as Prometheus metrics. On purpose it may
// refuse or hold a share of calls, or every call of a share of messages
// (Options.Fault), to see the sender's retries; a call's Standard Webhooks
// signature headers are logged as what they say (Event.Sig).
//
// The read API serves acknowledged events only: GET /v1/events (paged, by
// run, untagged and time window; Sink.Events, or ReadEvents on a log file)
// and GET /v1/stats (Sink.Stats). Beyond loopback it needs a read token of
// its own. New builds a Sink whose Handler a run embeds; Serve runs one
// standalone (`msgload sink`).
package sink
