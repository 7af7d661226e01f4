package forecast

import (
	"encoding/json"
	"os"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/layout"
)

// Cache keeps what git said of pairs of commits, by their ids, in one
// file: a forecast of 50 sandboxes reads it instead of running again the
// merges of the tips that have not moved. Save keeps only what was used
// since Open, so it holds the current tips' entries and no more.
type Cache struct {
	path string
	mu   sync.Mutex
	old  map[string][]string
	used map[string][]string
}

// OpenCache reads the cache at path; a missing or unreadable one is empty
// (it only saves time).
func OpenCache(path string) *Cache {
	c := &Cache{path: path, old: map[string][]string{}, used: map[string][]string{}}
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &c.old)
	}
	return c
}

func (c *Cache) get(key string) ([]string, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.used[key]
	if !ok {
		v, ok = c.old[key]
	}
	if ok {
		c.used[key] = v
	}
	return v, ok
}

func (c *Cache) put(key string, v []string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used[key] = v
}

// Save writes what was used; nothing when that is what was read.
func (c *Cache) Save() error {
	if c == nil || c.path == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sameKeys(c.old, c.used) {
		return nil
	}
	data, err := json.Marshal(c.used)
	if err != nil {
		return err
	}
	return layout.WriteFileAtomic(c.path, data)
}

func sameKeys(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			return false
		}
	}
	return true
}
