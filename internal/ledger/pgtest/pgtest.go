// Package pgtest gives tests a real Postgres server: a throwaway cluster it
// starts itself (initdb and postgres from Debian's postgresql package, on a
// Unix socket in a temporary directory, as an unprivileged user when the
// tests run as root, since postgres refuses root), or the server named by
// FIXRAIL_TEST_POSTGRES_URL. Each [URL] call is a fresh database, dropped
// when the test ends. A missing server fails the test; it never skips,
// because a skipped store test proves nothing about the store.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// EnvURL names an existing server to use instead of a throwaway cluster.
// Its role needs CREATEDB.
const EnvURL = "FIXRAIL_TEST_POSTGRES_URL"

// InstallHint is how to get the binaries the throwaway cluster needs.
const InstallHint = "apt-get install postgresql (scripts/test does), or set " + EnvURL

// nobody is the unprivileged user the cluster runs as under root.
const nobody = 65534

var (
	mu      sync.Mutex
	cluster *server
	seq     atomic.Int64
)

type server struct {
	base *url.URL // admin URL (database postgres)
	dir  string   // "" for an external server
	proc *exec.Cmd
	done chan error
}

// URL returns a postgres:// URL of a new empty database.
func URL(tb testing.TB) string {
	tb.Helper()
	u, drop, err := Database()
	if err != nil {
		tb.Fatalf("postgres for tests: %v", err)
	}
	tb.Cleanup(drop)
	return u
}

// Database makes a new empty database, starting the cluster on first use,
// and returns its URL and a func that drops it. It is [URL] for callers
// without a testing.TB (a testscript command); they must call drop, and
// [Stop] when their tests end.
func Database() (dsn string, drop func(), err error) {
	mu.Lock()
	defer mu.Unlock()
	if cluster == nil {
		s, err := start()
		if err != nil {
			return "", nil, err
		}
		cluster = s
	}
	base := cluster.base.String()
	name := fmt.Sprintf("fixrail_t%d_%d", os.Getpid(), seq.Add(1))
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create test database: %w", err)
	}
	drop = func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	}
	u := *cluster.base
	u.Path = "/" + name
	return u.String(), drop, nil
}

// Main runs the tests and then stops the cluster, if one was started. Call
// it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// Stop shuts the throwaway cluster down and removes its directory.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if cluster == nil || cluster.proc == nil {
		return
	}
	cluster.proc.Process.Signal(syscall.SIGINT) // fast shutdown
	select {
	case <-cluster.done:
	case <-time.After(20 * time.Second):
		cluster.proc.Process.Kill()
		<-cluster.done
	}
	os.RemoveAll(cluster.dir)
	cluster = nil
}

func start() (*server, error) {
	if raw := os.Getenv(EnvURL); raw != "" {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", EnvURL, err)
		}
		s := &server{base: u}
		return s, s.wait(10 * time.Second)
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fxpg")
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, nobody, nobody); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		cred = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, tail(out))
	}
	logf, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	proc := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-p", "5432",
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=100")
	proc.Dir = dir
	proc.Stdout, proc.Stderr = logf, logf
	// Pdeathsig stops the server if the test binary dies without Stop.
	proc.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := proc.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start postgres: %v", err)
	}
	s := &server{dir: dir, proc: proc, done: make(chan error, 1),
		base: &url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres", RawQuery: url.Values{"host": {dir}, "sslmode": {"disable"}}.Encode()}}
	go func() { s.done <- proc.Wait() }()
	if err := s.wait(60 * time.Second); err != nil {
		proc.Process.Kill()
		<-s.done
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%v; server log: %s", err, tail(log))
	}
	return s, nil
}

// wait polls until the server answers.
func (s *server) wait(limit time.Duration) error {
	db, err := sql.Open("pgx", s.base.String())
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if s.done != nil {
			select {
			case werr := <-s.done:
				s.done <- werr
				return fmt.Errorf("postgres exited: %v", werr)
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer after %s: %v", limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// binDir finds initdb and postgres: the newest Debian version directory,
// else PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	return "", errors.New("no postgres and initdb under /usr/lib/postgresql/*/bin or on PATH; install with " + InstallHint)
}

func versionOf(binDir string) int {
	v := filepath.Base(filepath.Dir(binDir))
	n := 0
	for _, r := range v {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 1500 {
		s = "…" + s[len(s)-1500:]
	}
	return s
}

// Role makes a login role on the database at admin with only the given
// table grants ("SELECT, INSERT ON fixrail_rails", …), after revoking
// CREATE on the public schema from everyone, and returns its URL and a
// func that drops it: a least-privilege ledger user.
func Role(admin, prefix string, grants ...string) (string, func(), error) {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()
	role := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), roles.Add(1))
	qs := []string{"CREATE ROLE " + role + " LOGIN", "REVOKE CREATE ON SCHEMA public FROM PUBLIC"}
	for _, g := range grants {
		qs = append(qs, "GRANT "+g+" TO "+role)
	}
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			return "", nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	drop := func() {
		if db, err := sql.Open("pgx", admin); err == nil {
			db.Exec("DROP OWNED BY " + role)
			db.Exec("DROP ROLE " + role)
			db.Close()
		}
	}
	u, err := url.Parse(admin)
	if err != nil {
		drop()
		return "", nil, err
	}
	u.User = url.User(role)
	return u.String(), drop, nil
}

var roles atomic.Int64
