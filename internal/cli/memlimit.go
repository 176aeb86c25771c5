package cli

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// defaultMemLimit is the soft memory limit a run sets itself when nothing
// tighter is known: an honest run's heap stays far below it (the harness
// reads at most a few tens of MiB of what an agent left), and under it
// the collector runs before garbage can push the process into a hard limit.
const defaultMemLimit = 1 << 30

// guardRuntime is the start of every run that executes repository code:
// a soft memory limit (see memLimit), and a fatal runtime error (out of
// memory, a crash in any goroutine) that aborts with SIGABRT instead of
// exiting 2, which the exit table gives to usage errors — a crash must
// never read as "you called it wrong". The process is already
// non-dumpable (hideEnvironment), so the abort writes no core holding
// the credentials in its memory.
func guardRuntime() {
	debug.SetTraceback("crash")
	if limit, ok := memLimit(os.LookupEnv, cgroupMemoryMax(), addressSpaceLimit()); ok {
		debug.SetMemoryLimit(limit)
	}
}

// memLimit chooses the soft limit: none when GOMEMLIMIT is set (the
// operator's, already applied by the runtime), else defaultMemLimit or
// half of the cgroup's memory.max or of RLIMIT_AS, whichever is least —
// half, because the agent, git and the tests share the cgroup, and a Go
// process maps more address space than its heap.
func memLimit(lookup func(string) (string, bool), cgroupMax, asLimit int64) (int64, bool) {
	if v, ok := lookup("GOMEMLIMIT"); ok && v != "" {
		return 0, false
	}
	limit := int64(defaultMemLimit)
	for _, hard := range []int64{cgroupMax, asLimit} {
		if hard > 0 && hard/2 < limit {
			limit = hard / 2
		}
	}
	return limit, true
}

// cgroupMemoryMax is the memory.max of this process's cgroup (v2), or 0
// when there is none or it is "max".
func cgroupMemoryMax() int64 {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil || len(data) > 4096 {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		p, ok := strings.CutPrefix(line, "0::")
		if !ok || strings.Contains(p, "..") {
			continue
		}
		v, err := os.ReadFile("/sys/fs/cgroup" + p + "/memory.max")
		if err != nil || len(v) > 64 {
			return 0
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err != nil {
			return 0 // "max"
		}
		return n
	}
	return 0
}

// addressSpaceLimit is RLIMIT_AS's soft value, or 0 when unlimited.
func addressSpaceLimit() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur >= math.MaxInt64 { // RLIM_INFINITY is all ones
		return 0
	}
	return int64(rl.Cur)
}
