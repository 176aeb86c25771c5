package vulndata

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// DefaultTTL is how long an answer is served without asking again (the
// same 6 h osv-scalibr uses for its deps.dev cache).
const DefaultTTL = 6 * time.Hour

// Cache is a directory of answers, one JSON file per (service, ecosystem,
// package), each written to a temporary file and renamed into place so a
// reader never sees half an entry.
type Cache struct {
	Dir string
	TTL time.Duration
	Now func() time.Time // nil: time.Now
}

// NewCache is a cache in dir with the default TTL.
func NewCache(dir string) *Cache { return &Cache{Dir: dir, TTL: DefaultTTL} }

// DefaultCacheDir is $XDG_CACHE_HOME/fixrail/vulndata (or its platform
// equivalent).
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "fixrail", "vulndata"), nil
}

type entry struct {
	Kind      string          `json:"kind"`
	Ecosystem string          `json:"ecosystem"`
	Name      string          `json:"name"`
	FetchedAt time.Time       `json:"fetched_at"`
	Data      json.RawMessage `json:"data"`
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// File is where the entry for kind/eco/name lives: the key is hashed, so a
// package name never becomes a path.
func (c *Cache) File(kind string, eco Ecosystem, name string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + string(eco) + "\x00" + eco.NormalizeName(name)))
	return filepath.Join(c.Dir, kind+"-"+hex.EncodeToString(sum[:16])+".json")
}

// get reads an entry; ok is false when there is none (or it is unreadable,
// or about another key: a hash collision or a file copied into place).
func (c *Cache) get(kind string, eco Ecosystem, name string) (entry, bool) {
	data, err := pathguard.ReadRegular(c.File(kind, eco, name), 2*maxBody)
	if err != nil {
		return entry{}, false
	}
	var e entry
	if json.Unmarshal(data, &e) != nil || e.Kind != kind || e.Ecosystem != string(eco) || e.Name != eco.NormalizeName(name) || e.Data == nil {
		return entry{}, false
	}
	return e, true
}

// Put stores data as the answer for kind/eco/name, fetched now.
func (c *Cache) Put(kind string, eco Ecosystem, name string, data any) error {
	return c.put(kind, eco, name, data, c.now().UTC())
}

// put stores data as fetched at: the time the answer that used it reports,
// so a decision made online and its offline replay name the same moment.
func (c *Cache) put(kind string, eco Ecosystem, name string, data any, at time.Time) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	b, err := json.Marshal(entry{Kind: kind, Ecosystem: string(eco), Name: eco.NormalizeName(name), FetchedAt: at, Data: raw})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.Dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	serr := f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, c.File(kind, eco, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// cached answers from the cache when it may (offline: any age; online:
// younger than the TTL), and otherwise fetches and stores. out receives the
// data either way.
func (c *Client) cached(_ context.Context, kind string, eco Ecosystem, name string, out any, fetch func() (any, error)) (Meta, error) {
	if !eco.Known() {
		return Meta{}, fmt.Errorf("%w %q", ErrUnknownEcosystem, string(eco))
	}
	if c.Cache != nil {
		if e, ok := c.Cache.get(kind, eco, name); ok {
			age := c.Cache.now().Sub(e.FetchedAt)
			fresh := age >= 0 && age < c.Cache.TTL
			if fresh || c.Offline {
				if err := json.Unmarshal(e.Data, out); err == nil {
					return Meta{FromCache: true, FetchedAt: e.FetchedAt, Stale: !fresh}, nil
				}
			}
		}
	}
	if c.Offline {
		return Meta{}, &MissError{Kind: kind, Ecosystem: string(eco), Name: name}
	}
	data, err := fetch()
	if err != nil {
		return Meta{}, err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return Meta{}, err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return Meta{}, err
	}
	now := time.Now().UTC()
	if c.Cache != nil {
		now = c.Cache.now().UTC()
		// A cache that cannot be written (read-only, full) costs the next
		// call a fetch; it does not make this answer wrong.
		_ = c.Cache.put(kind, eco, name, data, now)
	}
	return Meta{FetchedAt: now}, nil
}
