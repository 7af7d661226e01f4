package hostrepo

import (
	"context"
	"fmt"
	"os"

	"github.com/litterbox-dev/litterbox/internal/layout"
)

// aheadCache remembers, per sandbox, how many commits its branch had over its
// base at a given tip, so list counts with git only for branches that moved
// since it last looked: listing many sandboxes stays one docker ps plus one
// git for-each-ref.

// CommitsAhead returns how many commits tip has over base.
func (r *Repo) CommitsAhead(ctx context.Context, slug, base, tip string) (int, error) {
	path := r.Layout().Ahead(slug)
	if data, err := os.ReadFile(path); err == nil {
		var cachedTip, cachedBase string
		var n int
		if _, err := fmt.Sscan(string(data), &cachedTip, &cachedBase, &n); err == nil && cachedTip == tip && cachedBase == base {
			return n, nil
		}
	}
	n, err := r.Git.Count(ctx, base, tip)
	if err != nil {
		return 0, err
	}
	// A cache that cannot be written only costs a git call next time.
	_ = layout.WriteFileAtomic(path, fmt.Appendf(nil, "%s %s %d\n", tip, base, n))
	return n, nil
}
