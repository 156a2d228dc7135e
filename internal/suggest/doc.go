// Package suggest finds the name nearest to a mistyped one, for error
// messages that say "did you mean …?" (scenario fields, threshold names,
// simulator configuration keys).
package suggest
