// Package characterise measures a service's contract from outside (msgload
// characterise): it plans probes within a budget of requests and a time,
// runs each as a generated scenario through the harness (the same path as a
// run), and reads the findings — the rate limiter's burst, limit, algorithm,
// whether 429s use quota, per-client isolation, Retry-After, the
// notification API's idempotency and tokens (the real lifetime of a token
// held past its refresh against the expires_in announced, its refresh, the
// 401 and 403 answers' shapes), what a retried messaging send costs (a
// second txId, a second delivery), and the callbacks' retry schedule (the
// embedded sink refusing a chosen share of them on purpose), duplicate and
// out-of-order rates and signature — off the probes' runs, into a
// reports.Contract judged against the file's expect: block.
package characterise
