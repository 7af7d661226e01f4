//go:build integration

package sandbox

// processAttacks are the attack table's rows for a call's processes and PID 1 (issue 27, items 7 and 9).
var processAttacks = []attack{}
