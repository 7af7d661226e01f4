//go:build integration

package sandbox

// buildAttacks are the attack table's rows for the image build: trust and inputs (issue 27, item 4).
var buildAttacks = []attack{}
