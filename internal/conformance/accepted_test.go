package conformance

import "testing"

// TestGitHubAcceptedKeys: the keys GitHub's workflow schema accepts and
// actionlint's does not (a top-level description string; concurrency's
// queue, single or max, for the workflow or a job) are not unparseable;
// the same keys with values GitHub refuses, in other places, or any other
// unknown key still are.
func TestGitHubAcceptedKeys(t *testing.T) {
	const jobs = "jobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n"
	cases := []struct {
		name, src   string
		unparseable bool
	}{
		{"description", "name: x\ndescription: Triage new issues\non: push\npermissions: {}\n" + jobs, false},
		{"description block", "description: |\n  two\n  lines\non: push\npermissions: {}\n" + jobs, false},
		{"description quoted number", "description: \"42\"\non: push\npermissions: {}\n" + jobs, false},
		{"description number", "description: 42\non: push\npermissions: {}\n" + jobs, true},
		{"description mapping", "description:\n  a: b\non: push\npermissions: {}\n" + jobs, true},
		{"other top-level key", "summary: x\non: push\npermissions: {}\n" + jobs, true},
		{"description in a job", "on: push\npermissions: {}\njobs:\n  a:\n    description: x\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n", true},
		{"queue max", "on: push\npermissions: {}\nconcurrency:\n  group: g\n  queue: max\n" + jobs, false},
		{"queue single", "on: push\npermissions: {}\nconcurrency:\n  group: g\n  cancel-in-progress: false\n  queue: single\n" + jobs, false},
		{"job queue", "on: push\npermissions: {}\njobs:\n  a:\n    concurrency:\n      group: g\n      queue: max\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n", false},
		{"queue other value", "on: push\npermissions: {}\nconcurrency:\n  group: g\n  queue: all\n" + jobs, true},
		{"queue expression", "on: push\npermissions: {}\nconcurrency:\n  group: g\n  queue: ${{ inputs.q }}\n" + jobs, true},
		{"other concurrency key", "on: push\npermissions: {}\nconcurrency:\n  group: g\n  limit: 2\n" + jobs, true},
		{"queue at the top", "queue: max\non: push\npermissions: {}\n" + jobs, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := Lint("w.yml", []byte(c.src), Options{})
			got := len(findingsOf(fs, Unparseable)) > 0
			if got != c.unparseable {
				t.Errorf("unparseable = %v, want %v; findings:\n%s", got, c.unparseable, dump(fs))
			}
		})
	}
}
