// Package testnet holds what tests across msgload's packages need of the
// loopback network: an address to hand to a program that takes --addr.
package testnet
