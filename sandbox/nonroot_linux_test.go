//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testUser is the unprivileged account the non-root run uses; it is
// created when missing (CI runs as root).
const testUser = "coding-agent-sbxtest"

// createdTestUser records that this test binary created testUser, which
// cleanupTestGlobals then removes.
var createdTestUser bool

// testAccount returns testUser, creating it when missing; the test is
// skipped when it cannot be created.
func testAccount(t *testing.T) *user.User {
	t.Helper()
	if u, err := user.Lookup(testUser); err == nil {
		return u
	}
	out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", testUser).CombinedOutput()
	if err != nil {
		t.Skipf("cannot create the test user %s: %v %s", testUser, err, out)
	}
	createdTestUser = true
	u, err := user.Lookup(testUser)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// removeTestAccount deletes testUser if this test binary created it.
func removeTestAccount() {
	if createdTestUser {
		exec.Command("userdel", testUser).Run()
	}
}

// TestNonRoot runs the attack suite and the process tests again as an
// unprivileged user: the sandbox then needs a user namespace with the
// helper's capabilities carried as ambient ones.
func TestNonRoot(t *testing.T) {
	runAsTestUser(t, 120*time.Second, "TestAttacks", "TestAgentKilled", "TestCancelKillsTermIgnoringChild", "TestAllowed")
}

// runAsTestUser runs the named tests of this test binary as testUser,
// from a copy of the binary in a directory of that user's, and checks that
// each passed. It skips when not root or when the user cannot be made.
func runAsTestUser(t *testing.T, timeout time.Duration, tests ...string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("already running as a non-root user: the other tests cover it")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed: cannot drop to an unprivileged user")
	}
	u := testAccount(t)
	base, err := os.MkdirTemp("/var/lib", "coding-agent-sbxtest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	exe, _ := os.Executable()
	bin := filepath.Join(base, "sandbox.test")
	if out, err := exec.Command("cp", exe, bin).CombinedOutput(); err != nil {
		t.Fatalf("copy test binary: %v %s", err, out)
	}
	for _, d := range []string{"b", "home", "tmp"} {
		os.Mkdir(filepath.Join(base, d), 0o755)
	}
	if out, err := exec.Command("chown", "-R", u.Uid+":"+u.Gid, base).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, setpriv, "--reuid="+u.Uid, "--regid="+u.Gid, "--clear-groups", "--inh-caps=-all", "--",
		bin, "-test.count=1", "-test.v", "-test.run", "^("+strings.Join(tests, "|")+")$")
	cmd.Dir = base
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + base + "/home", "TMPDIR=" + base + "/tmp",
		"SANDBOX_TEST_BASE=" + base + "/b", "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as %s: %v\n%s", testUser, err, out)
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("as %s, %s did not pass:\n%s", testUser, name, out)
		}
	}
	t.Logf("as %s (uid %s): %d subtests passed, %d skipped", testUser, u.Uid,
		strings.Count(string(out), "--- PASS"), strings.Count(string(out), "--- SKIP"))
}
