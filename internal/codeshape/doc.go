// Package codeshape holds no code: its tests check the shape of msgload's own
// source (function length, exported API) so a review's findings stay fixed.
package codeshape
