package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/cli/hookcmd"
)

// FuzzMCPServe: whatever arrives on stdin, the server answers with one
// well-formed JSON-RPC 2.0 line per request it answers, never more lines
// than it read, and never panics.
func FuzzMCPServe(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"approval_status","arguments":{"tool":"Bash","tool_input":{"command":"git push -f"},"cwd":"/r"}}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_approval","arguments":{"tool":"","tool_input":[]}}}` + "\n{\n"))
	f.Add([]byte("[1,2]\n\n{\"jsonrpc\":\"1.0\",\"id\":null,\"method\":\"ping\"}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		t.Setenv("FIXRAIL_HOME", t.TempDir())
		var out, log bytes.Buffer
		s := &mcpServer{opts: mustOpts(t), cwd: "/src/repo", out: &out, log: &log}
		if err := s.serve(context.Background(), bytes.NewReader(in)); err != nil {
			t.Fatalf("serve: %v", err)
		}
		lines := 0
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			lines++
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("reply is not JSON: %q", sc.Bytes())
			}
			if string(m["jsonrpc"]) != `"2.0"` || (m["result"] == nil) == (m["error"] == nil) {
				t.Fatalf("reply is not JSON-RPC 2.0 with exactly one of result and error: %s", sc.Bytes())
			}
		}
		if in := strings.Count(string(in), "\n") + 1; lines > in {
			t.Fatalf("%d replies to %d lines", lines, in)
		}
	})
}

func mustOpts(t *testing.T) *hookcmd.Opts {
	t.Helper()
	_, o := mcpFlags()
	return o
}
