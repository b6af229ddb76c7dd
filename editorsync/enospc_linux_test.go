package editorsync

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestWatchLimitENOSPC hits the kernel's real inotify watch limit: in a new
// user namespace, whose root may lower /proc/sys/user/max_inotify_watches
// for that namespace only, the test binary runs itself as the child.
func TestWatchLimitENOSPC(t *testing.T) {
	if os.Getenv("EDITORSYNC_ENOSPC_CHILD") == "1" {
		enospcChild(t)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux-only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchLimitENOSPC$", "-test.v")
	cmd.Env = append(os.Environ(), "EDITORSYNC_ENOSPC_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		t.Skipf("user namespaces unavailable: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "ENOSPC-CHILD-OK") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func enospcChild(t *testing.T) {
	if err := os.WriteFile("/proc/sys/user/max_inotify_watches", []byte("3"), 0); err != nil {
		t.Fatalf("lowering the watch limit: %v", err)
	}
	root := realDir(t)
	for i := range 6 {
		if err := os.Mkdir(filepath.Join(root, fmt.Sprint("d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var logs syncBuffer
	h := newHarness(t, Options{Roots: []string{root}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	st := h.s.Status()
	if !st.LimitHit || st.Watches != 3 {
		t.Fatalf("Status = %+v, want the limit of 3 hit", st)
	}
	if !strings.Contains(logs.String(), "max_user_watches") {
		t.Fatalf("warning does not name the limit: %q", logs.String())
	}
	p := filepath.Join(root, "d0", "f")
	writeFile(t, p, "f")
	if c := only(t, h.sentinel(root), p); c.Kind != Created {
		t.Fatalf("got %+v", c)
	}
	fmt.Println("ENOSPC-CHILD-OK")
}
