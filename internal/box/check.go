package box

import "context"

// Check results.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// Check is one preflight check: what was checked, how it went, and for a
// failure or warning, how to fix it.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Checker is a provider with checks of its own beyond the engine's
// version (a cluster's context, permissions, storage and policy), which
// doctor runs once the engine answers.
type Checker interface {
	Checks(ctx context.Context) []Check
}

// StorageTeller is a provider that says where a new sandbox's /src lives
// (a claim of some storage class, or an emptyDir), for create's notes.
type StorageTeller interface {
	Storage(ctx context.Context) string
}
