#!/usr/bin/env bash
# Runs fixrail's redaction engine beside gitleaks v8.30.1 (see bench_test.go)
# and prints MB/s for each and the ratio fixrail/gitleaks:
#   - the 10 MB clean diff (fixrail Detect and Redact; gitleaks as `gitleaks stdin`);
#   - each hostile shape: fixrail at 1 MB and 100 KB, gitleaks at 100 KB in a
#     child process killed after 10 s ("> 10 s").
#
# Usage: ./bench.sh [--gitleaks-1mb] [--benchtime D] [--out FILE]
#   --gitleaks-1mb  also run gitleaks on each hostile shape at 1 MB (chunked like
#                   the CLI; up to 10 s per shape more)
#   --benchtime D   go test -benchtime for the fixrail runs (default 1s)
#   --out FILE      keep the raw `go test -bench` output in FILE
# Takes about 2 minutes on a 2-core box (gitleaks alone ~15 s per 10 MB pass).
set -euo pipefail
cd "$(dirname "$0")"

benchtime=1s
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --gitleaks-1mb) export GITLEAKSDIFF_GITLEAKS_1MB=1 ;;
    --benchtime) benchtime="$2"; shift ;;
    --out) out="$2"; shift ;;
    *) echo "usage: $0 [--gitleaks-1mb] [--benchtime D] [--out FILE]" >&2; exit 2 ;;
  esac
  shift
done

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
echo "== go test -bench (benchtime $benchtime; this takes a while)" >&2
go test -run '^$' -bench '^(BenchmarkCleanDiff|BenchmarkHostile)$' -benchtime "$benchtime" \
  -count 1 -timeout 60m . | tee "$raw" >&2
[ -n "$out" ] && cp "$raw" "$out"

awk '
function strip(n) { sub(/^Benchmark/, "", n); sub(/-[0-9]+$/, "", n); return n }
/^Benchmark/ {
  name = strip($1); ns = ""; mbs = ""
  for (i = 2; i <= NF; i++) {
    if ($i == "ns/op") ns = $(i-1)
    if ($i == "MB/s") mbs = $(i-1)
  }
  for (i = 2; i <= NF; i++) if ($i == "killed" && $(i-1) + 0 > 0) KILLED[name] = 1
  NS[name] = ns; MBS[name] = mbs; seen[name] = 1
  if (!(name in order)) { order[name] = ++n; names[n] = name }
}
function ms(name) { return (name in KILLED) ? "> 10000" : (NS[name] == "" ? "-" : sprintf("%.2f", NS[name] / 1e6)) }
function mb(name,   size) {
  size = (name ~ /1MB$/) ? 1.048576 : 0.1024
  return (name in KILLED) ? "< " sprintf("%.3f", size / 10) : (MBS[name] == "" ? "-" : MBS[name])
}
END {
  print ""
  print "== 10 MB clean diff"
  printf "%-16s %12s %10s\n", "scanner", "ms/op", "MB/s"
  split("CleanDiff/fixrail CleanDiff/fixrail-redact CleanDiff/gitleaks", c, " ")
  for (i = 1; i <= 3; i++) { k = c[i]; s = k; sub(/^CleanDiff\//, "", s); printf "%-16s %12s %10s\n", s, ms(k), mb(k) }
  g = MBS["CleanDiff/gitleaks"]
  if (g > 0) {
    printf "ratio fixrail/gitleaks (Detect): %.1fx   (Redact): %.1fx   goal >= 5x\n", MBS["CleanDiff/fixrail"] / g, MBS["CleanDiff/fixrail-redact"] / g
  }
  print ""
  print "== hostile shapes (ms per scan; MB/s in brackets; goal: fixrail <= 50 ms at 1 MB)"
  printf "%-18s %20s %20s %20s %22s %12s\n", "shape", "fixrail 1MB", "fixrail-redact 1MB", "fixrail 100KB", "gitleaks 100KB", "gl/fr 100KB"
  for (i = 1; i <= n; i++) {
    k = names[i]
    if (k !~ /^Hostile\//) continue
    split(k, p, "/"); sh = p[2]
    if (sh in done) continue
    done[sh] = 1
    b = "Hostile/" sh "/"
    f1 = b "fixrail-1MB"; fr = b "fixrail-redact-1MB"; f100 = b "fixrail-100KB"; g100 = b "gitleaks-100KB"
    ratio = "-"
    if (g100 in KILLED && NS[f100] > 0) ratio = sprintf("> %.0fx", 1e10 / NS[f100])
    else if (NS[g100] > 0 && NS[f100] > 0) ratio = sprintf("%.0fx", NS[g100] / NS[f100])
    printf "%-18s %20s %20s %20s %22s %12s\n", sh, ms(f1) " [" mb(f1) "]", ms(fr) " [" mb(fr) "]", ms(f100) " [" mb(f100) "]", ms(g100) " [" mb(g100) "]", ratio
    g1 = b "gitleaks-1MB"
    if ((g1 in seen) || (g1 in KILLED)) printf "%-18s %20s %20s %20s %22s\n", "", "", "", "gitleaks 1MB:", ms(g1) " [" mb(g1) "]"
  }
}' "$raw"
