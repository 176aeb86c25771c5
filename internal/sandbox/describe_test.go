package sandbox_test

import (
	"context"
	"testing"

	"github.com/fixrail/fixrail/internal/sandbox"
)

func TestResultDescribe(t *testing.T) {
	tests := []struct {
		name string
		res  sandbox.Result
		want string
	}{
		{"clean exit", sandbox.Result{}, "exit 0"},
		{"failing exit", sandbox.Result{ExitCode: 1}, "exit 1"},
		{"high exit", sandbox.Result{ExitCode: 255}, "exit 255"},
		{"never started", sandbox.Result{ExitCode: -1}, "exit -1"},
		{"signal", sandbox.Result{ExitCode: -1, Signal: "killed"}, "ended by signal (killed)"},
		// fixrail kills the group on a timeout, so the signal is a
		// consequence: the timeout is the reason worth reporting.
		{"timeout wins over the kill", sandbox.Result{ExitCode: -1, Signal: "killed", TimedOut: true}, "timed out"},
		{"cancel wins over the kill", sandbox.Result{ExitCode: -1, Signal: "killed", Canceled: true}, "canceled"},
		{"timeout wins over cancel", sandbox.Result{TimedOut: true, Canceled: true}, "timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.res.Describe(); got != tt.want {
				t.Errorf("Describe() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestResultDescribeRealSignal renders what Run records for a process that
// really died of a signal, so the wording follows the Signal field's actual
// contents rather than a value the table made up.
func TestResultDescribeRealSignal(t *testing.T) {
	res, err := sandbox.Run(context.Background(), sandbox.Cmd{Args: []string{"/bin/sh", "-c", "kill -SEGV $$"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Describe(), "ended by signal (segmentation fault)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}
