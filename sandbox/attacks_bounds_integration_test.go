//go:build integration

package sandbox

// boundsAttacks are the attack table's rows for bytes that reach the host (issue 27, items 8-9).
var boundsAttacks = []attack{}
