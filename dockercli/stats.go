package dockercli

import (
	"context"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/box"
)

// Stats is what each running container uses, by name: one `docker stats
// --no-stream` for all of them, which samples for about a second to tell
// CPU use.
func (c *Client) Stats(ctx context.Context) (map[string]box.Usage, error) {
	res, err := c.args(ctx, "stats", "--no-stream", "--format", "{{.Name}}\t{{.CPUPerc}}\t{{.MemUsage}}")
	if err != nil {
		return nil, err
	}
	return parseStats(string(res.Stdout)), nil
}

// parseStats reads stats' lines: name, CPU, "used / limit".
func parseStats(out string) map[string]box.Usage {
	usage := map[string]box.Usage{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[0] == "" {
			continue
		}
		used, _, _ := strings.Cut(f[2], " / ")
		usage[f[0]] = box.Usage{CPU: short(strings.TrimSpace(f[1])), Memory: short(strings.TrimSpace(used))}
	}
	return usage
}

// short is a figure with its unit in at most three significant digits
// (6.543MiB is 6.54MiB, 98.50% is 98.5%), so it fits a narrow column; what
// does not parse is kept as it is.
func short(v string) string {
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return v
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil {
		return v
	}
	digits := 2
	switch {
	case n >= 100:
		digits = 0
	case n >= 10:
		digits = 1
	}
	return strconv.FormatFloat(n, 'f', digits, 64) + v[i:]
}
