package ledger

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A holder names the process that holds a reservation: host, boot and pid
// with the process's start time, so that a reused pid is not mistaken for
// the holder. Only a holder on this machine and this boot can be proved
// dead; any other stays held until its lease ends.
type holder struct {
	host, boot string
	pid        int
	start      string
}

func (h holder) String() string {
	return fmt.Sprintf("%s|%s|%d|%s", h.host, h.boot, h.pid, h.start)
}

func parseHolder(s string) (holder, bool) {
	f := strings.Split(s, "|")
	if len(f) != 4 {
		return holder{}, false
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 {
		return holder{}, false
	}
	return holder{host: f[0], boot: f[1], pid: pid, start: f[3]}, true
}

// selfHolder describes this process.
func selfHolder() holder {
	host, _ := os.Hostname()
	start, _ := procStart(os.Getpid())
	return holder{host: host, boot: bootID(), pid: os.Getpid(), start: start}
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStart is field 22 of /proc/<pid>/stat (start time in clock ticks
// since boot), and whether the process is still running (not a zombie).
func procStart(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", false
	}
	// f[0] is field 3, the state; f[19] is field 22, starttime.
	return f[19], f[0] != "Z" && f[0] != "X"
}

// alive is false only for a holder provably gone: same host and boot,
// and its pid either not running or started at another time.
func (me holder) alive(s string) bool {
	h, ok := parseHolder(s)
	if !ok || me.boot == "" || h.host != me.host || h.boot != me.boot || h.start == "" {
		return true
	}
	start, running := procStart(h.pid)
	return running && start == h.start
}
