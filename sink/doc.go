// Package sink receives what the messaging and notification services post back —
// status callbacks, incoming messages and notification webhooks — and stores every
// call durably in an append-only JSON-lines log (group commit: a 2xx is sent only
// after the event is on disk). It correlates each event with the send it belongs to
// from the tag the attacker carried in trackData or externalId, measures delivery
// latency without any state shared with the attacker, and exports Prometheus metrics.
package sink
