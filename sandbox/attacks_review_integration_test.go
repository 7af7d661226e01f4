//go:build integration

package sandbox

// reviewAttacks are the attack table's rows for apply and merge: the review boundary (issue 27, items 1-3).
var reviewAttacks = []attack{}
