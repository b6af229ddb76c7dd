package sandbox

import (
	"os"
	"strconv"
	"strings"
)

// Children lists the processes whose parent is this process, from /proc:
// what a subreaper must reap or kill before it may exit.
func Children() []int {
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: the fields
		// start after the last ")".
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == self {
			out = append(out, pid)
		}
	}
	return out
}
