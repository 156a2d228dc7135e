// Package flatjson scans the flat JSON objects msgload reads once per request
// — a send answer, a line of attempts.jsonl — without encoding/json's
// reflection. It only splits an object into keys and raw values; a caller
// reads the values it knows and sends anything it does not take (and every
// object Fields refuses) to encoding/json, which stays the judge of what a
// document means.
package flatjson
