//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test binary also serves as a tool for the git guard's tests
// (SANDBOX_GITGUARD_TOOL), for system calls that bash cannot make. It runs
// before TestMain, in init.
func init() {
	if op := os.Getenv("SANDBOX_GITGUARD_TOOL"); op != "" {
		os.Exit(gitTool(op, os.Args[1:]))
	}
}

// gitTool performs one system call and prints OK or the errno's name.
func gitTool(op string, args []string) int {
	var err error
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch op {
	case "exchange": // renameat2(a, b, RENAME_EXCHANGE)
		err = unix.Renameat2(unix.AT_FDCWD, arg(0), unix.AT_FDCWD, arg(1), unix.RENAME_EXCHANGE)
	case "noreplace":
		err = unix.Renameat2(unix.AT_FDCWD, arg(0), unix.AT_FDCWD, arg(1), unix.RENAME_NOREPLACE)
	case "openat2": // openat2(path, O_CREAT|O_WRONLY, 0644)
		var fd int
		fd, err = unix.Openat2(unix.AT_FDCWD, arg(0), &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, Mode: 0o644})
		if err == nil {
			unix.Close(fd)
		}
	case "excl": // open(path, O_CREAT|O_EXCL|O_WRONLY)
		var fd int
		fd, err = unix.Open(arg(0), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
	case "cloexec": // the descriptor installed in the caller keeps O_CLOEXEC or not
		var fd int
		fd, err = unix.Open(arg(0), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			a, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			fd2, err2 := unix.Open(arg(0)+"2", unix.O_CREAT|unix.O_WRONLY, 0o644)
			if err2 != nil {
				err = err2
				break
			}
			b, _ := unix.FcntlInt(uintptr(fd2), unix.F_GETFD, 0)
			fmt.Printf("cloexec=%d plain=%d\n", a&unix.FD_CLOEXEC, b&unix.FD_CLOEXEC)
		}
	case "legacy": // the x86-64 system calls without *at: mkdir, creat
		if runtime.GOARCH != "amd64" {
			fmt.Println("SKIP")
			return 0
		}
		p, _ := unix.BytePtrFromString(arg(0))
		nr := uintptr(amd64Mkdir)
		if arg(1) == "creat" {
			nr = amd64Creat
		}
		if _, _, e := unix.Syscall(nr, uintptr(unsafe.Pointer(p)), 0o755, 0); e != 0 {
			err = e
		}
	case "undumpable": // a caller the guard's own thread may not read: created through the fallback
		if os.Getuid() != 0 {
			// As a non-root user the helper cannot read such a caller
			// either: its calls fail with EFAULT (known, README).
			fmt.Println("OK")
			return 0
		}
		if err = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			break
		}
		var fd int
		if fd, err = unix.Open(arg(0), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644); err == nil {
			unix.Close(fd)
			if err = unix.Mkdir(arg(0)+"d", 0o755); err == nil {
				err = unix.Mkdir(filepath.Join(filepath.Dir(arg(0)), ".git"), 0o755)
				if errors.Is(err, unix.EPERM) {
					err = nil
				} else if err == nil {
					err = errors.New("created .git")
				}
			}
		}
	case "toctou": // toctou DIR N: mkdir a path that another thread flips
		err = toctou(arg(0), arg(1))
	default:
		err = fmt.Errorf("unknown tool %q", op)
	}
	if err != nil {
		var e unix.Errno
		if errors.As(err, &e) {
			fmt.Println("ERR", unix.ErrnoName(e))
		} else {
			fmt.Println("ERR", err)
		}
		return 1
	}
	fmt.Println("OK")
	return 0
}

// toctou calls mkdir n times on a buffer that another thread keeps
// flipping between DIR/xgit and DIR/.git, racing the check of the path
// against its use. It stops when DIR/.git was created.
func toctou(dir, count string) error {
	n, _ := strconv.Atoi(count)
	safe, evil := []byte(dir+"/xgit\x00"), []byte(dir+"/.git\x00")
	buf := make([]byte, len(safe))
	copy(buf, safe)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			src := safe
			if i%2 == 1 {
				src = evil
			}
			for j := range src { // byte by byte, as a racing writer would
				*(*byte)(unsafe.Pointer(&buf[j])) = src[j]
			}
		}
	}()
	runtime.LockOSThread()
	fdcwd := unix.AT_FDCWD
	atFDCWD := uintptr(fdcwd) // sign-extended, as the kernel reads the register
	made := 0
	for range n {
		_, _, e := unix.Syscall(unix.SYS_MKDIRAT, atFDCWD, uintptr(unsafe.Pointer(&buf[0])), 0o755)
		if e == 0 {
			made++
			if exists(dir + "/.git") {
				break
			}
			os.Remove(dir + "/xgit")
		}
	}
	stop.Store(true)
	<-done
	fmt.Println("created", made)
	if exists(dir + "/.git") {
		return errors.New("created .git")
	}
	return nil
}

// live runs script in f.ws ("sandbox", "degraded" or "plain"), waits until
// the script has created done-marker (it then sleeps), runs check on the
// host while the command still runs, and cancels the command.
func live(t *testing.T, mode string, f *fixture, script string, check func() bool) (held bool, out string) {
	t.Helper()
	h := testHost(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The workspace root gets no new entries in the degraded mode (it
	// holds .git): the attacks and the marker are in src/.
	script = "cd src || exit 1\n" + script + "\ncd " + f.ws + "/src && touch done-marker && exec sleep 60"
	env := append(os.Environ(), "HOME="+f.home, "EXE="+h.exe)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	cleanup := func() {}
	if mode == "plain" {
		cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)
		cmd.Dir, cmd.Env = f.ws, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { cmd.Wait(); close(exited) }()
	} else {
		s := testSandbox(t)
		if mode == "degraded" {
			s = degradedSandbox(t)
		}
		cmd, err := s.Command(ctx, Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}}, script, f.ws, env)
		if err != nil {
			t.Fatalf("Command: %v", err)
		}
		if err := cmd.Start(w, w); err != nil {
			t.Fatal(err)
		}
		cleanup = cmd.Close
		go func() { cmd.Wait(); close(exited) }()
	}
	w.Close()
	var buf bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&buf, r); r.Close(); close(copied) }()
	output := func() string { <-exited; cancel(); <-copied; return buf.String() }
	deadline := time.Now().Add(30 * time.Second)
	for !exists(f.ws + "/src/done-marker") {
		select {
		case <-exited:
			cleanup()
			t.Fatalf("the command ended before its marker:\n%s", output())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no marker after 30s:\n%s", output())
		}
		time.Sleep(5 * time.Millisecond) // polling the host file system: no event to wait for
	}
	held = check()
	cancel()
	out = output()
	cleanup()
	return held, out
}

// gitAttacks try to create a `.git` in the workspace; each check runs on
// the host while the command still runs.
func gitAttacks() []struct {
	name, script string
	paths        []string // none of them may exist
} {
	return []struct {
		name, script string
		paths        []string
	}{
		{"git init in a subdirectory", "mkdir -p g && git init -q g; git -C g config core.fsmonitor evil", []string{"src/g/.git"}},
		{"mkdir", "mkdir -p m && mkdir m/.git", []string{"src/m/.git"}},
		{"mkdir -p, upper case", "mkdir -p a/b/.GIT/hooks; mkdir -p a/c/.Git", []string{"src/a/b/.GIT", "src/a/c/.Git"}},
		{"rename a prepared directory", "mkdir -p r/prepared && echo '[core] fsmonitor=evil' > r/prepared/config && mv r/prepared r/.git", []string{"src/r/.git"}},
		{"rename a file over the name, no-replace", "mkdir -p n && echo x > n/f && SANDBOX_GITGUARD_TOOL=noreplace $EXE n/f n/.git", []string{"src/n/.git"}},
		{"gitdir file with open(O_CREAT)", "mkdir -p o && echo 'gitdir: ../x' > o/.git", []string{"src/o/.git"}},
		{"symlink", "mkdir -p s x && ln -s ../x s/.git", []string{"src/s/.git"}},
		{"hard link", "mkdir -p h && echo 'gitdir: ../x' > h/file && ln h/file h/.git", []string{"src/h/.git"}},
		{"mkfifo", "mkdir -p p && mkfifo p/.git", []string{"src/p/.git"}},
		{"through a dangling symlink", "mkdir -p d && ln -s .git d/lnk && echo 'gitdir: ../x' > d/lnk; ln -s lnk d/lnk2; echo x >> d/lnk2; ln -s ../d/.git d/lnk3; echo x > d/lnk3",
			[]string{"src/d/.git"}},
		{"through /proc/self/cwd and /dev/fd", "mkdir -p q && cd q && echo x > /proc/self/cwd/.git; exec 3<. ; mkdir /dev/fd/3/.git; cd ..", []string{"src/q/.git"}},
		{"openat2 with O_CREAT", "mkdir -p o2 && SANDBOX_GITGUARD_TOOL=openat2 $EXE o2/.git", []string{"src/o2/.git"}},
		{"legacy mkdir and creat", "mkdir -p l && SANDBOX_GITGUARD_TOOL=legacy $EXE l/.git; SANDBOX_GITGUARD_TOOL=legacy $EXE l/.GIT creat", []string{"src/l/.git", "src/l/.GIT"}},
		{"race the path between check and use", "mkdir -p t && SANDBOX_GITGUARD_TOOL=toctou $EXE t 10000", []string{"src/t/.git"}},
	}
}

// TestGitGuard: no attack creates a `.git` while the command runs, in the
// full and the degraded sandbox; without the sandbox each does.
func TestGitGuard(t *testing.T) {
	testSandbox(t)
	for _, a := range gitAttacks() {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []string{"sandbox", "degraded", "plain"} {
				f := newFixture(t, true)
				var found []string
				held, out := live(t, mode, f, a.script, func() bool {
					for _, p := range a.paths {
						if exists(filepath.Join(f.ws, p)) {
							found = append(found, p)
						}
					}
					return len(found) == 0
				})
				switch {
				case mode != "plain" && !held:
					t.Errorf("%s: BREACH: %v exists while the command runs:\n%s", mode, found, out)
				case mode == "plain" && held:
					t.Errorf("baseline without the sandbox created nothing; the check cannot fail:\n%s", out)
				}
			}
		})
	}
}

// TestGitGuardSemantics: the calls the guard performs for the command
// behave as the kernel's own, checked on the host.
func TestGitGuardSemantics(t *testing.T) {
	testSandbox(t)
	uid := strconv.Itoa(os.Getuid())
	cases := []struct {
		name, script string
		check        func(f *fixture, out string) string // "" when right
	}{
		{"create, truncate, append", "echo hi > n.txt && printf abcdef > t && printf x > t && echo a >> ap && echo b >> ap", func(f *fixture, out string) string {
			return want(read(f.ws+"/n.txt") == "hi\n" && read(f.ws+"/t") == "x" && read(f.ws+"/ap") == "a\nb\n", "contents")
		}},
		{"O_EXCL on an existing file", "SANDBOX_GITGUARD_TOOL=excl $EXE file.txt; SANDBOX_GITGUARD_TOOL=excl $EXE new", func(f *fixture, out string) string {
			return want(out == "ERR EEXIST\nOK\n" && read(f.ws+"/file.txt") == "hello\n" && exists(f.ws+"/new"), "EEXIST then OK")
		}},
		{"umask", "umask 077 && touch u && mkdir ud && umask 022 && touch v && mkfifo fifo && umask 0 && mkdir -m 1777 sticky", func(f *fixture, out string) string {
			return want(perm(f.ws+"/u") == 0o600 && perm(f.ws+"/ud") == 0o700 && perm(f.ws+"/v") == 0o644 &&
				perm(f.ws+"/fifo") == 0o644 && perm(f.ws+"/sticky") == 0o777|os.ModeSticky, "modes")
		}},
		// A write-open of a FIFO blocks its executor until a reader comes;
		// the creation meanwhile needs another executor, or the script
		// deadlocks (the reader comes after it).
		{"a blocked call does not hold up others", `mkfifo q && { echo hi > q & } && w=$! &&
			until grep -q '^257 ' /proc/$w/syscall 2>/dev/null; do :; done &&
			touch other && cat q && wait`, func(f *fixture, out string) string {
			return want(out == "hi\n" && exists(f.ws+"/other"), "hi, and other created")
		}},
		{"ownership", "touch owned && mkdir owned-dir", func(f *fixture, out string) string {
			return want(owner(f.ws+"/owned") == uid && owner(f.ws+"/owned-dir") == uid, "owner uid "+uid)
		}},
		{"mkdir -p, mv, rename over, links", "mkdir -p a/b/c && echo 1 > a/b/c/f && mv a/b/c a/c2 && echo 2 > over && mv -f over a/c2/f && ln a/c2/f hl && ln -s a/c2/f sl && ln -s missing dangling",
			func(f *fixture, out string) string {
				var x, y unix.Stat_t
				unix.Stat(f.ws+"/a/c2/f", &x)
				unix.Stat(f.ws+"/hl", &y)
				l, _ := os.Readlink(f.ws + "/sl")
				return want(read(f.ws+"/a/c2/f") == "2\n" && !exists(f.ws+"/a/b/c") && x.Ino == y.Ino && l == "a/c2/f" && exists(f.ws+"/dangling"), "tree")
			}},
		{"rename exchange and no-replace", "echo a > ea && echo b > eb && SANDBOX_GITGUARD_TOOL=exchange $EXE ea eb; SANDBOX_GITGUARD_TOOL=noreplace $EXE ea eb; SANDBOX_GITGUARD_TOOL=exchange $EXE ea .GIT",
			func(f *fixture, out string) string {
				return want(out == "OK\nERR EEXIST\nERR EPERM\n" && read(f.ws+"/ea") == "b\n" && read(f.ws+"/eb") == "a\n", "exchanged, EEXIST, EPERM")
			}},
		{"create through a dangling symlink", "ln -s made.txt dl && echo x > dl && ln -s ../ws/made2 dl2 && echo y > dl2", func(f *fixture, out string) string {
			return want(read(f.ws+"/made.txt") == "x\n" && read(f.ws+"/made2") == "y\n", "targets created")
		}},
		{"the caller's descriptors through /dev and /proc/self", "echo out > /dev/stdout; echo hi | tee /dev/fd/3 3>fd3.txt >/dev/null; echo cwd > /proc/self/cwd/cwd.txt; exec 4<.; echo four > /dev/fd/4/four.txt",
			func(f *fixture, out string) string {
				return want(out == "out\n" && read(f.ws+"/fd3.txt") == "hi\n" && read(f.ws+"/cwd.txt") == "cwd\n" && read(f.ws+"/four.txt") == "four\n", "reopened")
			}},
		{"an undumpable caller", "SANDBOX_GITGUARD_TOOL=undumpable $EXE ud.txt", func(f *fixture, out string) string {
			return want(out == "OK\n" && (os.Getuid() != 0 || exists(f.ws+"/ud.txt") && exists(f.ws+"/ud.txtd")), "OK, created, .git refused")
		}},
		{"close-on-exec of the installed descriptor", "SANDBOX_GITGUARD_TOOL=cloexec $EXE ce", func(f *fixture, out string) string {
			return want(out == "cloexec=1 plain=0\nOK\n", "cloexec=1 plain=0")
		}},
		{"writes outside the roots still fail", "mkdir $HOME/x; touch $HOME/y; echo x > ../outside/new; mv file.txt ../outside/moved; ln file.txt ../outside/hl; ln -s x ../outside/sl; mkdir /etc/coding-agent-gg; true",
			func(f *fixture, out string) string {
				return want(!exists(f.home+"/x") && !exists(f.home+"/y") && !exists(f.out+"/new") && !exists(f.out+"/moved") && !exists(f.out+"/hl") &&
					!exists(f.out+"/sl") && !exists("/etc/coding-agent-gg") && read(f.ws+"/file.txt") == "hello\n", "nothing outside")
			}},
		{"git reads still work", "git status --short >/dev/null && git diff --stat && git -C sub status --short; echo rc=$?", func(f *fixture, out string) string {
			return want(strings.HasSuffix(out, "rc=0\n"), "rc=0")
		}},
		{".git on the private /tmp", "git init -q /tmp/r && test -d /tmp/r/.git && mkdir $TMPDIR/.git && echo ok", func(f *fixture, out string) string {
			return want(out == "ok\n", "ok")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			r := run(t, "sandbox", f, WorkspaceWrite, c.script, 30*time.Second)
			if msg := c.check(f, r.out); msg != "" {
				t.Errorf("want %s; exit %d:\n%s", msg, r.code, r.out)
			}
		})
	}
}

// TestGitGuardDegradedTemp: in the degraded mode the private temp is a host
// directory, so a `.git` there is refused too.
func TestGitGuardDegradedTemp(t *testing.T) {
	degradedSandbox(t)
	f := newFixture(t, true)
	r := run(t, "degraded", f, WorkspaceWrite, "mkdir $TMPDIR/.git; echo rc=$?", 30*time.Second)
	if !strings.HasSuffix(r.out, "rc=1\n") {
		t.Errorf("mkdir $TMPDIR/.git in the degraded mode:\n%s", r.out)
	}
}

func want(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

func perm(p string) os.FileMode {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0
	}
	return fi.Mode() & (os.ModePerm | os.ModeSticky)
}

func owner(p string) string {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return ""
	}
	return strconv.Itoa(int(st.Uid))
}

// TestGitGuardNonRoot runs the git guard's tests as an unprivileged user,
// with a user namespace (the helper then has ambient capabilities, which
// the executor must drop).
func TestGitGuardNonRoot(t *testing.T) {
	runAsTestUser(t, 180*time.Second, "TestGitGuard", "TestGitGuardSemantics")
}

// BenchmarkCreateFiles measures a file-creation-heavy command in the
// sandbox: every creation is a trapped system call that the helper
// performs for the command.
func BenchmarkCreateFiles(b *testing.B) {
	testSandbox(b)
	for b.Loop() {
		f := newFixture(b, false)
		r := run(b, "sandbox", f, WorkspaceWrite, "for i in $(seq 2000); do : > f$i; done; mkdir -p d/e/f; echo $?", time.Minute)
		if r.code != 0 {
			b.Fatalf("exit %d: %s", r.code, r.out)
		}
	}
}

// BenchmarkGoBuildColdCache builds a small module with a cold build cache
// in the private temp: the standard library is compiled again.
func BenchmarkGoBuildColdCache(b *testing.B) {
	testSandbox(b)
	for b.Loop() {
		f := newFixture(b, false)
		write(b, f.ws+"/go.mod", "module example.com/tiny\n\ngo 1.21\n")
		write(b, f.ws+"/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built\") }\n")
		r := run(b, "sandbox", f, WorkspaceWrite, "export GOTOOLCHAIN=local GOCACHE=$TMPDIR/gocache; go build -buildvcs=false -o tiny . && ./tiny", 10*time.Minute)
		if r.code != 0 || r.out != "built\n" {
			b.Fatalf("exit %d: %s", r.code, r.out)
		}
	}
}
