package ledger

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func wantUnreadable(t *testing.T, err error) {
	t.Helper()
	var ue *UnreadableError
	if !errors.As(err, &ue) || !errors.Is(err, ErrBudgetUnreadable) {
		t.Fatalf("got %v, want budget unreadable", err)
	}
}

func TestSQLiteRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	asDir := filepath.Join(dir, "state.db")
	if err := os.Mkdir(asDir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), "", dir, roomy())
	wantUnreadable(t, err)

	target := filepath.Join(dir, "elsewhere.db")
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, err = OpenSQLite(context.Background(), link, roomy())
	wantUnreadable(t, err)
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the symlink's target was created: %v", err)
	}

	_, err = OpenSQLite(context.Background(), "relative/state.db", roomy())
	wantUnreadable(t, err)
}

func TestSQLiteLockedPastTimeoutIsUnreadable(t *testing.T) {
	defer func(d time.Duration) { sqliteBusy = d }(sqliteBusy)
	sqliteBusy = 200 * time.Millisecond
	path := filepath.Join(t.TempDir(), "state.db")
	l := open(t, path, roomy())
	// Another writer holds the write lock and does not let go.
	other, err := sql.Open("sqlite", path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = l.Reserve(context.Background(), req("a"))
	wantUnreadable(t, err)
	wantUnreadable(t, l.Check(context.Background(), req("a")))
	tx.Rollback()
	mustReserve(t, l, req("a"))
}

func TestRefuseFS(t *testing.T) {
	for _, c := range []struct {
		magic  int64
		refuse bool
	}{
		{0xEF53, false},                  // ext4
		{0x58465342, false},              // xfs
		{0x01021994, false},              // tmpfs
		{0x9123683E, false},              // btrfs
		{0x794c7630, false},              // overlayfs (one kernel: fine)
		{0x6969, true},                   // nfs
		{0xFF534D42, true},               // cifs
		{0xFE534D42, true},               // smb2
		{0x517B, true},                   // smb
		{0x65735546, true},               // fuse (virtiofs/gRPC-FUSE bind mounts, fuse-overlayfs)
		{0x01021997, true},               // 9p (WSL, some VMs)
		{int64(int32(-0x1acb2be)), true}, // cifs magic as a sign-extended int32 f_type
	} {
		if got := refuseFS("/d", c.magic) != nil; got != c.refuse {
			t.Errorf("magic %#x: refused %v, want %v", c.magic, got, c.refuse)
		}
	}
}

func TestPostgresThatRefusesIsUnreadable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = Open(context.Background(), "postgres://fixrail@"+addr+"/ledger?sslmode=disable", t.TempDir(), roomy())
	wantUnreadable(t, err)
	// An unknown scheme is not quietly a local file either.
	_, err = Open(context.Background(), "mysql://h/db", t.TempDir(), roomy())
	wantUnreadable(t, err)
}

// A ledger file someone prepared with a trigger (here one that deletes
// every reservation as it is made, which would lift every cap) or a view
// is not fixrail's: opening it fails closed.
func TestSQLiteRefusesForeignObjects(t *testing.T) {
	for name, ddl := range map[string]string{
		"trigger": `CREATE TRIGGER lift AFTER INSERT ON fixrail_run BEGIN DELETE FROM fixrail_run; END`,
		"view":    `CREATE VIEW fixrail_spent AS SELECT 0 AS cost_micro`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			l := open(t, path, roomy())
			l.Close()
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(ddl); err != nil {
				t.Fatal(err)
			}
			db.Close()
			_, err = OpenSQLite(context.Background(), path, roomy())
			wantUnreadable(t, err)
		})
	}
}
