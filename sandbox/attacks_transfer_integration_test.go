//go:build integration

package sandbox

// transferAttacks are the attack table's rows for host-side writes and base refs (issue 27, items 5-6).
var transferAttacks = []attack{}
