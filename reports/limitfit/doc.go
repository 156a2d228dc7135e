// Package limitfit names the rate limiter a service behaves like from its
// decisions alone: each client's requests with their send times, latencies
// and answers (2xx accepted, 429 refused, 5xx or none failed). It fits a
// sliding log, fixed windows and token buckets, under each hypothesis of
// what used quota, to the moments the service could have seen each request
// (between its send and its answer), and says which fits, with its limit and
// window, or why none is named (see reports/README, "How the limiter is
// named").
//
// It is computation over plain inputs (Request, the scenario's limit and
// window) returning its own Result, which the reports map onto summary.json's
// rate_limit.algorithm; it links nothing beyond the standard library, so
// characterise and tests can use it without the analysis or the writers.
package limitfit
