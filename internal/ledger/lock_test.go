package ledger

import (
	"errors"
	"testing"
)

func TestTryLock(t *testing.T) {
	dir := t.TempDir()
	a, err := TryLock(dir, "42")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(dir, "42"); !errors.Is(err, ErrHeld) {
		t.Fatalf("second lock on the same id: got %v, want ErrHeld", err)
	}
	other, err := TryLock(dir, "43")
	if err != nil {
		t.Fatalf("lock on another id: %v", err)
	}
	defer other.Release()
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	b, err := TryLock(dir, "42")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	b.Release()
}
