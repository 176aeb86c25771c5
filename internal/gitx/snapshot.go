package gitx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// ErrSnapshot reports that the config snapshot a Repo uses is missing or no
// longer the file that was written. Every call fails with it until the run
// ends: the snapshot is never taken again from the live config.
var ErrSnapshot = errors.New("gitx: config snapshot missing or altered")

// ErrGitTooOld reports a git older than MinGitVersion. Returned wrapped.
var ErrGitTooOld = errors.New("gitx: git is too old")

// MinGitVersion is the oldest git fixrail runs: GIT_CONFIG_GLOBAL, which
// the snapshot depends on, arrived in 2.32.
const MinGitVersion = "2.32.0"

var minGit = [3]int{2, 32, 0}

// snapDirPrefix names the snapshot's directory, so Close can refuse to
// delete anything it did not make.
const snapDirPrefix = "fixrail-gitconfig-"

// snapFile is the snapshot's name inside its directory.
const snapFile = "config"

// GitVersion runs `git version` and returns the version it reports, such
// as "2.39.5". A git older than MinGitVersion, or one whose version cannot
// be read, is an error wrapping ErrGitTooOld.
func GitVersion(ctx context.Context) (string, error) {
	out, err := (&Repo{}).run(ctx, invocation{dir: string(filepath.Separator), args: []string{"version"}})
	if err != nil {
		return "", fmt.Errorf("git version: %w", err)
	}
	return checkGitVersion(string(out))
}

// checkGitVersion parses `git version` output and compares it with minGit.
func checkGitVersion(out string) (string, error) {
	v, parts, err := parseGitVersion(out)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrGitTooOld, err)
	}
	for i := range parts {
		if parts[i] != minGit[i] {
			if parts[i] < minGit[i] {
				return v, fmt.Errorf("%w: have %s, need %s or later", ErrGitTooOld, v, MinGitVersion)
			}
			break
		}
	}
	return v, nil
}

// parseGitVersion reads "git version 2.39.5", "git version 2.32.0.windows.1"
// or "git version 2.39.3 (Apple Git-145)". A missing patch level is 0.
func parseGitVersion(out string) (string, [3]int, error) {
	var parts [3]int
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	rest, ok := strings.CutPrefix(line, "git version ")
	if !ok {
		return "", parts, fmt.Errorf("unrecognised version output %q", line)
	}
	v, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	fields := strings.Split(v, ".")
	if len(fields) < 2 {
		return "", parts, fmt.Errorf("unrecognised version %q", v)
	}
	for i := 0; i < 3 && i < len(fields); i++ {
		digits := fields[i]
		if end := strings.IndexFunc(digits, func(c rune) bool { return c < '0' || c > '9' }); end >= 0 {
			digits = digits[:end]
		}
		n, err := strconv.Atoi(digits)
		if err != nil || (i < 2 && digits != fields[i]) {
			return "", parts, fmt.Errorf("unrecognised version %q", v)
		}
		parts[i] = n
	}
	return v, parts, nil
}

// Snap is the operator's git config, copied once at start into a read-only
// file: the effective system and global config, includes inlined,
// include.path and includeIf keys dropped, evaluated from a neutral
// directory so that no includeIf condition fires. Every git call of a Repo
// using it reads it through GIT_CONFIG_GLOBAL, with GIT_CONFIG_NOSYSTEM=1,
// and checks its SHA-256 first. Code running as the same user can still
// rewrite it; what is enforced is that the next call then fails.
type Snap struct {
	dir, path string
	sum       [sha256.Size]byte
	version   string
	entries   []configEntry // what was written, in order

	closeOnce sync.Once
	closeErr  error
}

// Snapshot checks the git version (ErrGitTooOld below MinGitVersion) and
// writes the operator's effective system and global config, mode 0400, into
// a new 0700 directory under os.TempDir. The caller must Close it. Values
// are kept exactly, multi-valued keys in order; the file is read back with
// git before Snapshot returns, so one git could not read as written is a
// start-up error, not a silent change.
func Snapshot(ctx context.Context) (*Snap, error) {
	version, err := GitVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("config snapshot: %w", err)
	}
	sweepSnapshots(os.TempDir())
	// The owner's pid is in the name, so a later process can tell the
	// leftovers of one killed with SIGKILL from a live one's snapshot.
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", snapDirPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("config snapshot: %w", err)
	}
	s := &Snap{dir: dir, path: filepath.Join(dir, snapFile), version: version}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("config snapshot: %w", err)
	}
	// The new, empty directory is the neutral place: not a repository, and
	// with the ceiling at its parent git cannot find one above it, so
	// includeIf gitdir:, onbranch: and hasconfig: never match.
	out, err := (&Repo{}).run(ctx, invocation{
		dir:   dir,
		class: classOperator,
		args:  []string{"config", "--list", "--includes", "--show-scope", "--show-origin", "-z"},
		env:   []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)},
	})
	if err != nil {
		return nil, fmt.Errorf("config snapshot: read operator config: %w", err)
	}
	all, err := parseConfigList(out, true, true)
	if err != nil {
		return nil, fmt.Errorf("config snapshot: %w", err)
	}
	for _, e := range all {
		if (e.Scope == "system" || e.Scope == "global") && !isIncludeKey(e.Key) {
			s.entries = append(s.entries, e)
		}
	}
	data, err := encodeConfig(s.entries)
	if err != nil {
		return nil, fmt.Errorf("config snapshot: %w", err)
	}
	if err := pathguard.WriteNew(s.path, data, 0o400); err != nil {
		return nil, fmt.Errorf("config snapshot: %w", err)
	}
	s.sum = sha256.Sum256(data)

	back, err := (&Repo{}).run(ctx, invocation{dir: dir, args: []string{"config", "--file", s.path, "--no-includes", "--list", "-z"}})
	if err != nil {
		return nil, fmt.Errorf("config snapshot: read back: %w", err)
	}
	got, err := parseConfigList(back, false, false)
	if err != nil {
		return nil, fmt.Errorf("config snapshot: read back: %w", err)
	}
	if err := sameEntries(s.entries, got); err != nil {
		return nil, fmt.Errorf("config snapshot: read back: %w", err)
	}
	ok = true
	return s, nil
}

// sweepSnapshots removes the snapshot directories under parent whose owner
// is gone: each holds only the snapshot file, and is removed only then.
func sweepSnapshots(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), snapDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		(&Snap{dir: dir, path: filepath.Join(dir, snapFile)}).remove()
	}
}

// Path is the snapshot file, for a child fixrail starts that runs git
// itself; give it SHA256 too.
func (s *Snap) Path() string { return s.path }

// SHA256 is the hex digest of the snapshot as written.
func (s *Snap) SHA256() string { return hex.EncodeToString(s.sum[:]) }

// GitVersion is the git version Snapshot checked, such as "2.39.5".
func (s *Snap) GitVersion() string { return s.version }

// Verify checks that the snapshot is still a regular file with the content
// written. Anything else is an error wrapping ErrSnapshot.
func (s *Snap) Verify() error {
	fi, err := os.Lstat(s.path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrSnapshot, s.path)
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	if sha256.Sum256(data) != s.sum {
		return fmt.Errorf("%w: %s changed since it was written", ErrSnapshot, s.path)
	}
	return nil
}

// Close removes the snapshot and its directory. It deletes only what
// Snapshot made: a directory it did not name, a symlink, or a directory
// holding anything but the snapshot is left alone and reported. Repos still
// using the snapshot fail with ErrSnapshot afterwards. Close is idempotent.
func (s *Snap) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.remove() })
	return s.closeErr
}

func (s *Snap) remove() error {
	if !strings.HasPrefix(filepath.Base(s.dir), snapDirPrefix) {
		return fmt.Errorf("remove config snapshot: %s is not a snapshot directory", s.dir)
	}
	fi, err := os.Lstat(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove config snapshot: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("remove config snapshot: %s is not a directory", s.dir)
	}
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("remove config snapshot: %w", err)
	}
	for _, e := range ents {
		if e.Name() != snapFile {
			return fmt.Errorf("remove config snapshot: %s holds %q, which fixrail did not write; left in place", s.dir, e.Name())
		}
	}
	if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove config snapshot: %w", err)
	}
	if err := os.Remove(s.dir); err != nil {
		return fmt.Errorf("remove config snapshot: %w", err)
	}
	return nil
}

// Open is Open with this snapshot in force from the first git call on, so
// that settings such as safe.directory already apply to finding the
// repository.
func (s *Snap) Open(ctx context.Context, dir string) (*Repo, error) {
	return open(ctx, dir, s)
}

// configEntry is one line of `git config --list`.
type configEntry struct {
	Scope  string // "system", "global", "local", "worktree", "command"; "" if not listed
	Origin string // "file:<path>" and the like; "" if not listed
	Key    string // section and name lowercased, subsection as written
	// HasValue is false for a key written without "=", which git reads as
	// boolean true and distinguishes from an empty value (false).
	HasValue bool
	Value    string
}

// parseConfigList reads `git config --list -z`, with --show-scope and
// --show-origin if scope and origin: records of
// "[scope\0][origin\0]key[\nvalue]\0".
func parseConfigList(out []byte, scope, origin bool) ([]configEntry, error) {
	fields := bytes.Split(out, []byte{0})
	if len(fields[len(fields)-1]) != 0 {
		return nil, errors.New("config listing: not NUL-terminated")
	}
	fields = fields[:len(fields)-1]
	per := 1
	if scope {
		per++
	}
	if origin {
		per++
	}
	if len(fields)%per != 0 {
		return nil, fmt.Errorf("config listing: %d fields, want a multiple of %d", len(fields), per)
	}
	var entries []configEntry
	for i := 0; i < len(fields); i += per {
		var e configEntry
		f := fields[i : i+per]
		if scope {
			e.Scope, f = string(f[0]), f[1:]
		}
		if origin {
			e.Origin, f = string(f[0]), f[1:]
		}
		key, value, has := bytes.Cut(f[0], []byte{'\n'})
		if len(key) == 0 {
			return nil, errors.New("config listing: empty key")
		}
		e.Key, e.Value, e.HasValue = string(key), string(value), has
		entries = append(entries, e)
	}
	return entries, nil
}

// isIncludeKey reports the keys that would make git read another file:
// include.path and includeIf.<condition>.path (and anything else in an
// includeIf section, which has no other meaning).
func isIncludeKey(key string) bool {
	return key == "include.path" || strings.HasPrefix(key, "includeif.")
}

// encodeConfig writes entries as a git config file that git reads back as
// exactly those entries, in order. Each value is quoted and escaped.
func encodeConfig(entries []configEntry) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# fixrail: snapshot of the operator's git config. Read-only; checked by SHA-256.\n")
	prev := ""
	for _, e := range entries {
		section, sub, hasSub, name, err := splitKey(e.Key)
		if err != nil {
			return nil, err
		}
		header := "[" + section
		if hasSub {
			header += ` "` + escapeSubsection(sub) + `"`
		}
		header += "]\n"
		if header != prev {
			b.WriteString(header)
			prev = header
		}
		b.WriteString("\t" + name)
		if e.HasValue {
			if strings.ContainsRune(e.Value, 0) {
				return nil, fmt.Errorf("config key %s: value holds NUL", e.Key)
			}
			b.WriteString(" = " + quoteValue(e.Value))
		}
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// splitKey splits a listed key at its first and last dot: section, optional
// subsection (which may itself hold dots), name.
func splitKey(key string) (section, sub string, hasSub bool, name string, err error) {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first <= 0 || last == len(key)-1 {
		return "", "", false, "", fmt.Errorf("config key %q: want section.name", key)
	}
	section, name = key[:first], key[last+1:]
	if first != last {
		sub, hasSub = key[first+1:last], true
	}
	for _, c := range section {
		if !isAlnum(c) && c != '-' && c != '.' {
			return "", "", false, "", fmt.Errorf("config key %q: bad section name", key)
		}
	}
	for i, c := range name {
		if !isAlnum(c) && (c != '-' || i == 0) {
			return "", "", false, "", fmt.Errorf("config key %q: bad variable name", key)
		}
	}
	if strings.ContainsAny(sub, "\n\x00") {
		return "", "", false, "", fmt.Errorf("config key %q: subsection holds a newline or NUL", key)
	}
	return section, sub, hasSub, name, nil
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// escapeSubsection escapes what a quoted subsection name cannot hold as is.
func escapeSubsection(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// quoteValue quotes a value so that git's parser returns it unchanged: in
// quotes, leading and trailing blanks, '#' and ';' are literal, and the only
// escapes git knows are \\ \" \n \t \b.
func quoteValue(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`).Replace(v) + `"`
}

// sameEntries compares key, presence of a value, and value, in order.
func sameEntries(want, got []configEntry) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d entries written, %d read", len(want), len(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Key != g.Key || w.HasValue != g.HasValue || w.Value != g.Value {
			return fmt.Errorf("entry %d: wrote key %s, read key %s with a different value", i, w.Key, g.Key)
		}
	}
	return nil
}
