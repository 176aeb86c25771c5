package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// fileID is a directory's device and inode: what the run recorded when it
// made the directory, so cleanup and a later sweep remove that directory
// and no other, whatever was written inside it (a marker can be deleted;
// an inode cannot be forged).
type fileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

func idOf(p string) (fileID, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.IsDir() {
		return fileID{}, fmt.Errorf("%s: not a directory", p)
	}
	return fileID{Dev: uint64(st.Dev), Ino: st.Ino}, nil
}

// runDirRecord is kept in the state directory for as long as the run's
// disposable directory exists: a run killed with SIGKILL leaves it, and the
// next run's sweep removes the directory it names.
type runDirRecord struct {
	Dir string `json:"dir"`
	ID  fileID `json:"id"`
	PID int    `json:"pid"`
	Run string `json:"run"`
}

func (r *run) recordsDir() string { return filepath.Join(r.stateDir, "rundirs") }

// makeRunDir creates the run's disposable directory: the agent's tree, the
// hand-off directory, private indexes (in a directory nothing the run
// starts can see) and the fresh checkouts all live in it.
func (r *run) makeRunDir() *Outcome {
	m := marker{Finding: r.fin.ID, Repo: r.s.Repo.Top(), Run: r.rep.RunID, PID: os.Getpid()}
	dir, err := pathguard.NewDisposable(r.p.TempDir, m.String())
	if err != nil {
		return stop(Halt, ReasonCheckError, "disposable dir: "+err.Error())
	}
	r.dir = dir
	if r.dirID, err = idOf(dir); err != nil {
		return stop(Halt, ReasonCheckError, "disposable dir: "+err.Error())
	}
	if err := realDir(r.recordsDir()); err != nil {
		return stop(Halt, ReasonCheckError, "state dir: "+err.Error())
	}
	rec, _ := json.Marshal(runDirRecord{Dir: dir, ID: r.dirID, PID: os.Getpid(), Run: r.rep.RunID})
	if err := pathguard.WriteNew(filepath.Join(r.recordsDir(), r.rep.RunID+".json"), rec, 0o600); err != nil {
		return stop(Halt, ReasonCheckError, "state dir: "+err.Error())
	}
	// agent/ is all an agent may write: its tree and, beside it, the
	// hand-off files (the claude adapter's phase hook confines every path
	// to the tree's parent). git/ holds the private indexes, which no agent
	// or test ever sees.
	for _, sub := range []string{"git", "agent"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			return stop(Halt, ReasonCheckError, "disposable dir: "+err.Error())
		}
	}
	r.handoff = filepath.Join(dir, "agent")
	return nil
}

// cleanup removes the run's disposable directory — the agent's tree and
// every checkout in it — on every path out of Run (success, escalation,
// halt, panic, signal), then releases the finding's lock and removes its
// file. No git runs here:
// the trees are plain directories, so a poisoned clone is no obstacle.
func (r *run) cleanup() {
	if r.dir != "" {
		if err := removeRecorded(r.dir, r.dirID); err != nil {
			r.rep.Warnings = append(r.rep.Warnings, "remove run dir: "+err.Error())
		} else {
			_ = os.Remove(filepath.Join(r.recordsDir(), r.rep.RunID+".json"))
		}
	}
	// The lock file goes with the lock: every finding ever run would
	// otherwise leave one behind (ledger.Lock.Remove says why that is safe).
	if err := r.lock.Remove(); err != nil {
		r.rep.Warnings = append(r.rep.Warnings, "release lock: "+err.Error())
	}
}

// removeRecorded removes dir if it is still the directory recorded as id.
func removeRecorded(dir string, id fileID) error {
	got, err := idOf(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if got != id {
		return fmt.Errorf("%s is no longer the directory this run made; left in place", dir)
	}
	return removeTree(dir)
}

// removeTree deletes dir after giving its owner write access to every
// directory below it: a test that made a subdirectory read-only must not pin
// the tree for an operator who is not root. Symlinks are never followed.
func removeTree(dir string) error {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if info, err := d.Info(); err == nil && info.Mode().Perm()&0o700 != 0o700 {
				_ = os.Chmod(p, info.Mode().Perm()|0o700)
			}
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// sweepRunDirs removes what runs killed with SIGKILL left behind: each
// record whose process is gone names a directory, removed if it is still
// the one recorded.
func (r *run) sweepRunDirs() {
	ents, err := os.ReadDir(r.recordsDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		p := filepath.Join(r.recordsDir(), e.Name())
		data, err := pathguard.ReadRegular(p, 4096)
		var rec runDirRecord
		if err != nil || json.Unmarshal(data, &rec) != nil || rec.PID <= 0 {
			continue
		}
		if rec.PID == os.Getpid() || syscall.Kill(rec.PID, 0) != syscall.ESRCH {
			continue // alive, or not ours to judge
		}
		if err := removeRecorded(rec.Dir, rec.ID); err != nil {
			r.note("sweep", err.Error())
			continue
		}
		_ = os.Remove(p)
		r.note("sweep", "removed the directory run "+rec.Run+" left behind")
	}
}

// realDir makes sure p, in a directory already checked, is a directory
// and not a symlink, creating it if absent.
func realDir(p string) error {
	d, err := pathguard.OpenDirBeneath(filepath.Dir(p), filepath.Base(p), 0o755)
	if err != nil {
		return err
	}
	return d.Close()
}
