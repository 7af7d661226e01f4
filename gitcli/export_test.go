package gitcli

// The two ways CommitChanges makes a commit, each for any number of
// changes, so that tests compare them.
var (
	CommitImported = (*Client).commitImported
	CommitBuilt    = (*Client).commitBuilt
)
