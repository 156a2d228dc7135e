// Package ratelimitfield reads the IETF RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers-11) as Structured Fields (RFC 9651)
// Lists of Items: RateLimit-Policy `"default";q=100;w=60` (q the quota,
// required; w the window in seconds, not zero) and RateLimit
// `"default";r=42;t=17` (r what remains, required; t the seconds until the
// quota resets). It reads them strictly: what a service writes otherwise is
// an error to report as malformed, never guessed at. It is the one reader of
// the fields: characterise checks them answer by answer, the reports read
// the announced policy from it. It links only the standard library.
package ratelimitfield
