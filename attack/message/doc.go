// Package message builds the request bodies msgload sends: notify
// notifications and messaging send requests, from a scenario's message spec
// (recipients from a pattern, a range or a CSV file; templated text of a target
// size; every messaging field of the seed) with the correlation tag carried in
// externalId or trackData. Bodies are deterministic for a seed and a sequence.
package message
