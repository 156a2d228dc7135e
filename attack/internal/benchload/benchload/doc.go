// Command benchload runs package benchload: msgload's side of the attack
// benchmark.
package main
