// Package sandbox runs child processes under fixrail's containment: an exact
// environment built from allowlists, their own process group, a deadline,
// capped output, a throwaway TMPDIR and, where bubblewrap is usable, a
// sandbox that hides the operator's home, the rest of the filesystem and the
// network (an agent's one way out is the egress proxy, package egress, which
// Spec.Egress puts in front of it). Toolchains finds the dependency caches (Go modules, the cargo
// registry, the Maven repository, npm's cache, a virtualenv) that a
// sandboxed build sees read-only, and the environment that makes the
// toolchains use them offline with per-run build caches.
//
// What stays residual outside the sandbox (Mode Off, or Auto without
// bubblewrap): the child runs as the operator and can read what the operator
// can by absolute path, and a process that calls setsid(2) or setpgid(2)
// leaves the group and is not killed; Run only stops waiting for the pipes it
// holds, pipeGrace after the group is dead. Inside the sandbox such a process
// is still in the sandbox's pid namespace and dies with it.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultOutputCap is the number of bytes kept per stream when Cmd.OutputCap is 0.
const DefaultOutputCap = 5 << 20

// pipeGrace bounds how long Run waits for end-of-file on the output pipes after
// the process group is dead. Only a process that left the group (setsid) can
// still hold them, and it must not be able to keep Run from returning.
const pipeGrace = time.Second

// Cmd describes one child process.
type Cmd struct {
	// Args is the argv. Args[0] is looked up in the parent's PATH unless it
	// contains a slash; a relative path with a slash is relative to Dir, as
	// with os/exec.
	Args []string
	// Dir is the working directory; empty means the parent's.
	Dir string
	// Env is the child's whole environment (KEY=VALUE); nothing is inherited,
	// so nil means an empty environment.
	Env []string
	// Stdin is written to the child's stdin after the deadline is armed, then
	// stdin is closed. Empty means /dev/null.
	Stdin []byte
	// Timeout bounds the run; 0 means only ctx bounds it, and a negative value
	// is already expired.
	Timeout time.Duration
	// OutputCap is the number of bytes kept per stream; 0 or less means
	// DefaultOutputCap.
	OutputCap int
	// Sandbox, when set, runs the command inside bubblewrap as the Spec
	// says; nil runs it unsandboxed. Inside, HOME points at an empty tmpfs
	// and TMPDIR, TMP and TEMP (those set in Env) at the sandbox's /tmp;
	// bwrap adds PWD (the working directory); nothing else in Env changes.
	// Args[0] without a slash must be on fixrail's PATH (as unsandboxed)
	// and is looked up again inside, in Env's PATH; bwrap reports one it
	// cannot find there as exit 1. Dir must lie in RW, RO or the toolchain.
	Sandbox *Spec

	// rails hands a bwrap command line that carries railArgs their
	// descriptors (Detect's probe; a sandboxed command's are its own).
	rails bool
}

// Result is what a finished child left behind. Timeouts, signals and non-zero
// exits are all reported here, never as errors.
//
// Inside the sandbox, bubblewrap reports a command that a signal ended as
// ExitCode 128+n with Signal empty; Signal is set when fixrail's kill (a
// timeout, a cancel) or an outside signal ended bwrap itself.
type Result struct {
	ExitCode      int           // exit status; -1 when ended by a signal or never started
	Signal        string        // e.g. "killed", "terminated" when ended by a signal, else ""
	TimedOut      bool          // Timeout or ctx's deadline fired and fixrail killed the group
	Canceled      bool          // ctx was canceled (not a deadline) and fixrail killed the group
	Stdout        string        // first OutputCap bytes, invalid UTF-8 replaced with U+FFFD
	Stderr        string        // as Stdout
	StdoutDropped int64         // bytes beyond the cap, counted not kept
	StderrDropped int64         // as StdoutDropped
	Duration      time.Duration // from start until the leader exited
	Sandboxed     bool          // the command ran inside the sandbox (false: Sandbox nil or Off, or Auto without bubblewrap)
	Started       bool          // the process was started (false: ctx was done first); sandboxed, the process is bwrap
}

// Output returns stdout and stderr joined, stdout first, for symptom matching.
// A newline is put between them when stdout does not end with one, so that the
// last stdout line and the first stderr line do not merge into one.
func (r Result) Output() string {
	if r.Stdout == "" || r.Stderr == "" || strings.HasSuffix(r.Stdout, "\n") {
		return r.Stdout + r.Stderr
	}
	return r.Stdout + "\n" + r.Stderr
}

// Describe says in a few words how the command ended, for a verdict's or an
// error's detail: "exit 1", "timed out", "canceled" or "ended by signal
// (killed)". It is the one rendering of a Result's ending, so that every
// report words the same ending the same way.
func (r Result) Describe() string {
	switch {
	case r.TimedOut:
		return "timed out"
	case r.Canceled:
		return "canceled"
	case r.Signal != "":
		return "ended by signal (" + r.Signal + ")"
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// MaxTail bounds what Tail returns, in bytes.
const MaxTail = 16 << 10

// Tail returns the last n lines of Output, at most MaxTail bytes of them
// (cut at a character boundary), for a verdict's record of why a test went
// the way it did. It is not redacted: the caller redacts before writing it
// anywhere. A first line says how many bytes the output cap dropped, when it
// dropped any: the tail is then the end of what was kept, not of what ran.
func (r Result) Tail(n int) string {
	if n <= 0 {
		return ""
	}
	out := strings.TrimRight(r.Output(), "\n")
	// Walk back over n line breaks; the output may be megabytes.
	start := len(out)
	for range n {
		j := strings.LastIndexByte(out[:start], '\n')
		if j < 0 {
			start = -1
			break
		}
		start = j
	}
	out = out[start+1:]
	if len(out) > MaxTail {
		cut := len(out) - MaxTail
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out = out[cut:]
	}
	if d := r.StdoutDropped + r.StderrDropped; d > 0 {
		out = fmt.Sprintf("[output cap dropped %d bytes]\n", d) + out
	}
	return out
}

// Success reports whether the child exited 0 on its own.
func (r Result) Success() bool {
	return r.ExitCode == 0 && !r.TimedOut && !r.Canceled && r.Signal == ""
}

// Run starts c and waits for it and for its whole process group. The error is
// non-nil only when the process could not be started (bad argv, missing
// binary, bad Dir, a Spec that cannot be honoured — ErrNoSandbox among
// them); a non-zero exit, a signal, a timeout are all data in Result. If ctx
// is already done (or Timeout is negative), the child is not started and the
// Result says TimedOut or Canceled with ExitCode -1.
//
// When the group leader exits, the rest of its group is killed: background
// grandchildren never outlive Run. The deadline is armed before the child
// starts, so a child that never reads its stdin cannot hold Run past it.
//
// Sandboxed, the group leader is bwrap. Its command runs in a new session
// (--new-session), so outside fixrail's process group, but bwrap's pid-1
// reaper carries --die-with-parent: when bwrap exits, or the group kill
// reaches it, the reaper dies and the kernel kills everything left in the
// pid namespace.
func Run(ctx context.Context, c Cmd) (Result, error) {
	if len(c.Args) == 0 {
		return Result{}, errors.New("start: empty argv")
	}
	args, env, sandboxed, withRails := c.Args, c.Env, false, c.rails
	if c.Sandbox != nil {
		w, err := c.Sandbox.wrap(c)
		if err != nil {
			return Result{}, err
		}
		// The proxy dies with the command (fixrail's own death takes it
		// too: it is goroutines of this process).
		defer w.stop()
		args, env, sandboxed = w.argv, w.env, w.sandboxed
		withRails = withRails || w.sandboxed
	}
	limit := c.OutputCap
	if limit <= 0 {
		limit = DefaultOutputCap
	}
	if c.Timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}

	cmd := exec.Command(args[0], args[1:]...)
	if cmd.Err != nil {
		return Result{}, fmt.Errorf("start %s: %w", c.Args[0], cmd.Err)
	}
	cmd.Dir = c.Dir
	// A nil Env would make os/exec inherit ours. Sandboxed, bwrap is given
	// the command's environment (HOME and TMPDIR already rewritten) and
	// passes it on; bwrap --clearenv with --setenv would do the same but
	// put the values in bwrap's argv, which /proc shows to every user.
	cmd.Env = env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.SysProcAttr = sysProcAttr()

	if err := ctx.Err(); err != nil {
		var r Result
		r.ExitCode = -1
		r.markInterrupted(err)
		return r, nil
	}

	// Own pipes rather than io.Writers: os/exec would then wait for every
	// holder of the write end, including grandchildren we have yet to kill.
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("start %s: %w", c.Args[0], err)
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return Result{}, fmt.Errorf("start %s: %w", c.Args[0], err)
	}
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW
	var inR, inW *os.File
	if len(c.Stdin) > 0 {
		if inR, inW, err = os.Pipe(); err != nil {
			outW.Close()
			errW.Close()
			return Result{}, fmt.Errorf("start %s: %w", c.Args[0], err)
		}
		defer inW.Close()
		cmd.Stdin = inR
	}

	var rl *rails
	if withRails {
		if rl, err = openRails(); err != nil {
			outW.Close()
			errW.Close()
			if inR != nil {
				inR.Close()
			}
			return Result{}, fmt.Errorf("start %s: %w", c.Args[0], err)
		}
		defer rl.close()
		cmd.ExtraFiles = rl.files
	}

	// Pdeathsig belongs to the thread that forks the child, not to the
	// process: when that thread exits (Go ends a thread whose goroutine
	// returns while locked to it, as any code may do), the kernel kills the
	// child mid-run. Holding the thread until the child is reaped keeps
	// every other goroutine off it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// On every start, not once: a descriptor opened since without the
	// flag would reach this child as well.
	if err := closeOnExecInherited(); err != nil {
		outW.Close()
		errW.Close()
		if inR != nil {
			inR.Close()
		}
		if rl != nil {
			rl.closeChild()
		}
		return Result{}, fmt.Errorf("start %s: %w", c.Args[0], err)
	}
	start := time.Now()
	err = cmd.Start()
	// The child has its own copies; ours would keep the pipes open forever.
	outW.Close()
	errW.Close()
	if inR != nil {
		inR.Close()
	}
	if rl != nil {
		rl.closeChild()
	}
	if err != nil {
		return Result{}, fmt.Errorf("start %s: %w", c.Args[0], err)
	}
	pid := cmd.Process.Pid
	if rl != nil {
		if err := rl.release(ctx, sandboxLimits); err != nil {
			killGroup(pid)
			_ = cmd.Wait()
			return Result{}, fmt.Errorf("start %s: %w", c.Args[0], err)
		}
	}

	exited := make(chan struct{})
	go func() {
		// An error here cannot be acted on; treating it as an exit errs on
		// the side of killing the group.
		_ = waitExited(pid)
		close(exited)
	}()

	stdout, stderr := &capped{limit: limit}, &capped{limit: limit}
	var readers sync.WaitGroup
	readers.Go(func() { _, _ = io.Copy(stdout, outR) })
	readers.Go(func() { _, _ = io.Copy(stderr, errR) })

	stdinDone := make(chan struct{})
	closeStdin := func() {}
	if inW != nil {
		var once sync.Once
		closeStdin = func() { once.Do(func() { _ = inW.Close() }) }
		go func() {
			defer close(stdinDone)
			// EPIPE (the child stopped reading) is the child's business.
			_, _ = inW.Write(c.Stdin)
			closeStdin()
		}()
	} else {
		close(stdinDone)
	}

	r := Result{Sandboxed: sandboxed, Started: true}
	select {
	case <-exited:
	case <-ctx.Done():
		select {
		case <-exited: // it finished on its own; the deadline ended nothing
		default:
			killGroup(pid)
			r.markInterrupted(ctx.Err())
			<-exited
		}
	}
	r.Duration = time.Since(start)
	// The leader is a zombie, not yet reaped, so its pid cannot have been
	// reused as another group's id: this kills only what it left behind.
	killGroup(pid)
	// Unblocks a writer stuck on a pipe that only an escaped process holds.
	closeStdin()
	<-stdinDone

	_ = cmd.Wait() // exit status is read from ProcessState below
	r.ExitCode = cmd.ProcessState.ExitCode()
	r.Signal = signalName(cmd.ProcessState)

	drained := make(chan struct{})
	go func() {
		readers.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(pipeGrace):
		// Closing interrupts the blocked reads; what was read so far is kept.
		_ = outR.Close()
		_ = errR.Close()
		<-drained
	}

	r.Stdout, r.StdoutDropped = stdout.result()
	r.Stderr, r.StderrDropped = stderr.result()
	return r, nil
}

func (r *Result) markInterrupted(err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		r.TimedOut = true
	} else {
		r.Canceled = true
	}
}

// capped keeps the first limit bytes written and counts the rest. It never
// fails a write, so the child is drained and never blocks on a full pipe.
type capped struct {
	limit   int
	buf     []byte
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.limit - len(c.buf); room > 0 {
		k := min(room, len(p))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
	}
	c.dropped += int64(len(p))
	return n, nil
}

func (c *capped) result() (string, int64) {
	return strings.ToValidUTF8(string(c.buf), "\uFFFD"), c.dropped
}
