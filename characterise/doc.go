// Package characterise measures a service's contract from outside (msgload
// characterise): it plans probes within a budget of requests and a time,
// runs each as a generated scenario through the harness (the same path as a
// run), and reads the findings — the rate limiter's burst, limit, algorithm,
// whether 429s use quota, per-client isolation, Retry-After, the
// notification API's idempotency and tokens (the real lifetime of a token
// held past its refresh against the expires_in announced, its refresh, the
// 401 and 403 answers' shapes), what a retried messaging send costs (a
// second txId, a second delivery), and the callbacks' retry schedule (the
// embedded sink refusing a chosen share of them on purpose), what the
// sender does with a 410 Gone and its own timeout (the sink answering 410,
// or holding its answer past the sender's patience), duplicate and
// out-of-order rates and signature, and for the messaging API when a
// failover starts against its ttl and whether check-status agrees with the
// callbacks — off the probes' runs, into a
// reports.Contract judged against the file's expect: block.
//
// Against a real target, one limiter serves every probe: the straddle
// probe is timed to a boundary of a fixed window that the burst probe's
// recoveries put (straddle_phase.go). Limiters nobody here wrote (nginx,
// x/time/rate, throttled's GCRA) and the simulator's own are characterised
// in tests through toxiproxy's latency jitter too (jitter_test.go): every
// finding holds within its interval or cannot be told.
package characterise
