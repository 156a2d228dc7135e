// Package attack sends a load scenario's messages as open-model traffic on
// vegeta's attacker: requests leave at the pacer's times whatever the target
// does, spread over clients, limited per client when asked, retried and probed
// for idempotency, and every HTTP request is recorded as a rundir.Attempt (in
// attempts.jsonl and in vegeta's results.bin) and counted in Prometheus metrics.
package attack
