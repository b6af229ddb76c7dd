//go:build linux

package sandbox

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// helper is the re-executed process: PID 1 of the sandbox's namespaces (or,
// in the degraded mode, a subreaper). Only the goroutine that starts bash
// runs on a restricted thread; the others keep the rights the helper needs
// to clean up after bash.
type helper struct {
	cfg    helperConfig
	masked []string // directories covered by a private tmpfs
	// locks are shared flocks on placeholders this helper mounted; a
	// placeholder is removed only when nobody holds one.
	locks []int
	// extraProtected are missing paths that someone else created before
	// the helper could place a placeholder; they are mounted read-only.
	extraProtected []string
	bash           int
}

func helperMain(namespaces bool) int {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Nothing the command starts may inherit a descriptor: not the
	// agent's pidfd (it could signal the agent with it), nor one the
	// agent inherited from its own parent without close-on-exec.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail("close-on-exec", err)
	}
	agentGone := make(chan struct{})
	go func() {
		fds := []unix.PollFd{{Fd: agentPidfdFD, Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				break
			}
		}
		close(agentGone)
	}()
	// What does not depend on the command is done before it arrives: a
	// spare helper waits here, ready.
	var warmErr error
	if namespaces {
		warmErr = warmNamespaces()
	} else if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		warmErr = fmt.Errorf("subreaper: %w", err)
	}
	warmUp()
	unix.Write(helperSocketFD, []byte{helperReady})
	cfg, err := readRequest()
	if err != nil {
		// No command (the parent discarded this helper, or died).
		return 0
	}
	h := &helper{cfg: cfg}
	code := h.run(namespaces, warmErr, sigs, agentGone)
	// The status goes out once nothing of the command is left and the
	// helper holds no copy of its output: the parent may report the
	// command as finished while the namespaces are torn down.
	if null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
		unix.Dup3(null, 1, 0)
		unix.Dup3(null, 2, 0)
		unix.Close(null)
	}
	unix.Write(helperSocketFD, []byte(strconv.Itoa(code)+"\n"))
	return code
}

// readRequest receives the command's stdout and stderr, installs them as
// the helper's own (so that its messages reach the command's output), and
// reads the config up to EOF.
func readRequest() (helperConfig, error) {
	var cfg helperConfig
	oob := make([]byte, unix.CmsgSpace(2*4))
	b := make([]byte, 1)
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(helperSocketFD, b, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || n != 1 {
		return cfg, fmt.Errorf("no request: %v", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return cfg, fmt.Errorf("request without descriptors: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 2 {
		return cfg, fmt.Errorf("request with %d descriptors: %v", len(fds), err)
	}
	for i, fd := range fds {
		if err := unix.Dup3(fd, 1+i, 0); err != nil {
			return cfg, err
		}
		unix.Close(fd)
	}
	// Plain reads: an *os.File would close the descriptor when collected.
	var js []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(helperSocketFD, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return cfg, fmt.Errorf("reading the config: %w", err)
		}
		if n == 0 {
			break
		}
		js = append(js, buf[:n]...)
	}
	if err := json.Unmarshal(js, &cfg); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// run sets up the sandbox for the command, runs it and returns bash's exit
// code (or exitSetup, exitExec).
func (h *helper) run(namespaces bool, warmErr error, sigs <-chan os.Signal, agentGone <-chan struct{}) int {
	if h.cfg.Namespaces != namespaces {
		return fail("config", fmt.Errorf("a command for namespaces=%v sent to a helper with namespaces=%v", h.cfg.Namespaces, namespaces))
	}
	if warmErr != nil {
		return fail("start", warmErr)
	}
	if h.cfg.Namespaces {
		if err := h.setupMounts(); err != nil {
			h.removePlaceholders()
			return fail("mounts", err)
		}
	}
	// Nothing inside may read the helper's memory or open its /proc files.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		h.epilogue()
		return fail("dumpable", err)
	}
	started := make(chan error, 1)
	go h.startRestricted(started)
	if err := <-started; err != nil {
		h.epilogue()
		var ee *exec.Error
		if errors.As(err, &ee) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			fmt.Fprintf(os.Stderr, "sandbox: cannot start bash: %v\n", err)
			return exitExec
		}
		return fail("restrict", err)
	}
	go func() {
		for {
			select {
			case sig := <-sigs:
				h.killAll(sig.(syscall.Signal)) // cancel: pass it on, SIGKILL follows
			case <-agentGone:
				h.killAll(unix.SIGKILL)
				return
			}
		}
	}()
	code := h.wait()
	h.epilogue()
	return code
}

func fail(step string, err error) int {
	fmt.Fprintf(os.Stderr, "sandbox: %s: %v\n", step, err)
	return exitSetup
}

// startRestricted restricts its own locked thread and starts bash from it,
// so that bash inherits the restrictions. It never unlocks: the thread ends
// with the goroutine and no other code ever runs on it.
func (h *helper) startRestricted(done chan<- error) {
	runtime.LockOSThread()
	// Its own cwd and umask (fs_struct): the git guard sets the umask per
	// call on this thread.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		done <- fmt.Errorf("unshare CLONE_FS: %w", err)
		return
	}
	rules := h.rules()
	if err := landlockRestrictThread(rules, !h.cfg.Namespaces); err != nil {
		done <- err
		return
	}
	var c [8]byte
	if _, err := rand.Read(c[:]); err != nil {
		done <- err
		return
	}
	cookie := binary.LittleEndian.Uint64(c[:])
	listener, err := seccompRestrictThread(!h.cfg.Namespaces, cookie)
	if err != nil {
		done <- err
		return
	}
	// This thread serves the filter once bash runs: bash's name-creating
	// calls wait for it meanwhile.
	guard := newGitGuard(listener, rules, !h.cfg.Namespaces, h.masked, cookie, h.cfg.Namespaces)
	if err := dropCaps(); err != nil {
		done <- err
		return
	}
	cmd := exec.Command("/bin/bash", "-c", h.cfg.Script)
	cmd.Env, cmd.Dir = h.cfg.Env, h.cfg.Dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// A new session: no controlling terminal (no TIOCSTI injection), and
	// one process group to signal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		done <- err
		return
	}
	h.bash = cmd.Process.Pid
	done <- nil
	if guard.inline {
		guard.serve()
	} else {
		go guard.serve() // on an unrestricted thread: see newGitGuard
	}
}

// wait reaps until bash exits, then kills and reaps everything else, and
// returns bash's exit code.
func (h *helper) wait() int {
	code := exitSetup
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break
		}
		if pid == h.bash {
			if ws.Signaled() {
				code = 128 + int(ws.Signal())
			} else {
				code = ws.ExitStatus()
			}
			break
		}
	}
	h.killRest()
	return code
}

// killAll sends sig to every process of the sandbox.
func (h *helper) killAll(sig unix.Signal) {
	if h.cfg.Namespaces {
		// As PID 1 of the namespace, -1 means every other process in it.
		unix.Kill(-1, sig)
		return
	}
	if h.bash > 0 {
		unix.Kill(-h.bash, sig)
	}
	// The helper is a subreaper: the command's orphans become its
	// children.
	for _, pid := range Children() {
		unix.Kill(pid, sig)
	}
}

// killRest kills and reaps every process left once bash is gone: setsid
// daemons and double forks included.
func (h *helper) killRest() {
	for {
		h.killAll(unix.SIGKILL)
		var ws unix.WaitStatus
		_, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.ECHILD {
			if !h.cfg.Namespaces && len(Children()) > 0 {
				continue
			}
			return
		}
	}
}

// epilogue runs when nothing of the command is left: placeholders are
// removed. (No `.git` can have been created: the git guard refused it.)
func (h *helper) epilogue() {
	h.removePlaceholders()
	if !h.cfg.Namespaces && ownTemp(h.cfg.Temp) {
		os.RemoveAll(h.cfg.Temp)
	}
}

func (h *helper) removePlaceholders() {
	if h.cfg.Namespaces {
		for _, p := range h.cfg.Missing {
			unix.Unmount(p, unix.MNT_DETACH)
		}
	}
	for _, fd := range h.locks {
		unix.Close(fd)
	}
	h.locks = nil
	removePlaceholders(h.cfg.Missing)
}

// rules is the Landlock ruleset: read everywhere, write to the private
// temp, the few devices, and the writable roots.
func (h *helper) rules() []llRule {
	rules := []llRule{{path: "/", access: llRead}}
	for _, f := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"} {
		rules = append(rules, llRule{path: f, access: llAll, file: true})
	}
	if h.cfg.Namespaces {
		for _, d := range h.masked {
			rules = append(rules, llRule{path: d, access: llAll})
		}
		if h.cfg.Preset == WorkspaceWrite {
			for _, r := range h.cfg.Roots {
				rules = append(rules, llRule{path: r, access: llAll})
			}
		}
		return rules
	}
	rules = append(rules, llRule{path: h.cfg.Temp, access: llAll})
	if h.cfg.Preset == WorkspaceWrite {
		prot := concat(h.cfg.Protected, h.cfg.Missing)
		for _, r := range h.cfg.Roots {
			rules = append(rules, siblingRules(r, prot)...)
		}
	}
	return rules
}

// siblingRules protects paths without a mount namespace: every entry of
// dir is writable except the protected ones; the directories on the way
// to a protected path stay read-only, so nothing in them can be created,
// renamed or removed (the cost: no new entries at those levels).
// Symlinks are never granted: the rule would land on their target.
func siblingRules(dir string, prot []string) []llRule {
	var inside []string
	for _, p := range prot {
		if strings.HasPrefix(p, dir+"/") {
			inside = append(inside, p)
		}
	}
	if len(inside) == 0 {
		return []llRule{{path: dir, access: llAll}}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var rules []llRule
	for _, e := range ents {
		full := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0, slices.Contains(inside, full):
		case e.IsDir():
			rules = append(rules, siblingRules(full, inside)...)
		default:
			rules = append(rules, llRule{path: full, access: llAll, file: true})
		}
	}
	return rules
}

// dropCaps empties the calling thread's capability sets and bounding set.
func dropCaps() error {
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		// EPERM without CAP_SETPCAP (non-root, no user namespace): then
		// no capability can be gained anyway (no_new_privs is set).
		unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective|data[1].Effective|data[0].Permitted|data[1].Permitted != 0 {
		return errors.New("capabilities remain after dropping them")
	}
	return nil
}

// setupMounts builds the sandbox's view of the file system.
func (h *helper) setupMounts() error {
	c := &h.cfg
	// Placeholders first, while every path is the host's.
	for _, p := range c.Missing {
		if err := h.placeholder(p); err != nil {
			return err
		}
	}
	// Directories that stay visible although they may lie below a masked
	// one: held by O_PATH descriptors across the masking.
	type kept struct {
		path string
		rw   bool
		fd   int
	}
	var keep []kept
	add := func(paths []string, rw bool) error {
		for _, p := range paths {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				if !rw && errors.Is(err, unix.ENOENT) {
					continue
				}
				return fmt.Errorf("open %s: %w", p, err)
			}
			keep = append(keep, kept{p, rw, fd})
		}
		return nil
	}
	if err := add(c.Roots, true); err != nil {
		return err
	}
	if err := add(c.Visible, false); err != nil {
		return err
	}
	if err := add(c.Keep, false); err != nil {
		return err
	}
	defer func() {
		for _, k := range keep {
			unix.Close(k.fd)
		}
	}()
	slices.SortStableFunc(keep, func(a, b kept) int { return strings.Count(a.path, "/") - strings.Count(b.path, "/") })
	for _, d := range []string{"/tmp", "/var/tmp", "/run", "/dev/shm"} {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue // absent, or a symlink (/var/run): covered by its target
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("private %s: %w", d, err)
		}
		h.masked = append(h.masked, d)
	}
	var bound []string
	for _, k := range keep {
		if !fspath.WithinAny(k.path, h.masked) || slices.Contains(bound, k.path) || (!k.rw && fspath.WithinAny(k.path, c.Roots)) {
			continue
		}
		if err := os.MkdirAll(k.path, 0o755); err != nil {
			return fmt.Errorf("mount point %s: %w", k.path, err)
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", k.path, err)
		}
		if !k.rw {
			if err := remountRO(k.path); err != nil {
				return err
			}
		}
		bound = append(bound, k.path)
	}
	for _, p := range c.Sockets {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue // hidden by a private tmpfs, or gone
		}
		if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mask host socket %s: %w", p, err)
		}
	}
	// Pins and read-only binds, shallow first: a mount never hides one
	// made below it, and a pin below a read-only bind is read-only too.
	type op struct {
		path string
		pin  bool
	}
	var ops []op
	for _, p := range c.Pins {
		ops = append(ops, op{p, true})
	}
	for _, p := range concat(c.Protected, c.Missing, h.extraProtected) {
		ops = append(ops, op{p, false})
	}
	slices.SortStableFunc(ops, func(a, b op) int { return strings.Count(a.path, "/") - strings.Count(b.path, "/") })
	for _, o := range ops {
		var st unix.Stat_t
		if err := unix.Lstat(o.path, &st); err != nil {
			if errors.Is(err, unix.ENOENT) && !fspath.WithinAny(o.path, c.Roots) {
				continue // hidden by a private tmpfs: nothing to protect
			}
			return fmt.Errorf("protect %s: %w", o.path, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return fmt.Errorf("protected path %s became a symlink; refusing to run", o.path)
		}
		if err := unix.Mount(o.path, o.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", o.path, err)
		}
		if !o.pin {
			if err := remountRO(o.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// warmUp runs Go's fork and exec path once, with a program that does not
// exist, and decodes a config: the first exec and the first decoding of a
// process are slow (the code and data they touch are faulted in, type
// information is built), and the command should not pay for that.
func warmUp() {
	cmd := exec.Command("/nonexistent/coding-agent-warm-up")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	_ = cmd.Start()
	var cfg helperConfig
	_ = json.Unmarshal([]byte(`{"script":"","env":["A=b"],"roots":["/"],"namespaces":true}`), &cfg)
}

// warmNamespaces does the part of the setup that is the same for every
// command: mount propagation from the host only (a slave: the host's
// mounts and unmounts reach the sandbox even when the helper was started
// long before its command, and nothing goes back), a /proc of the new PID
// namespace, and the loopback interface up.
func warmNamespaces() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make / a slave mount: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := loUp(); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	return nil
}

// remountRO makes the bind mount at p read-only. In a user namespace the
// remount must keep the flags the mount was locked with.
func remountRO(p string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", p, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, m := range []struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&m.st != 0 {
			flags |= m.ms
		}
	}
	if err := unix.Mount("", p, "", flags, ""); err != nil {
		return fmt.Errorf("remount %s read-only: %w", p, err)
	}
	return nil
}

// placeholder occupies the missing protected path p with an empty
// directory (mode 0555) for the read-only bind mount, and holds a shared
// flock on it so that a concurrent command does not remove it while this
// one relies on it.
func (h *helper) placeholder(p string) error {
	for range 8 {
		if err := unix.Mkdir(p, placeholderMode); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("placeholder %s: %w", p, err)
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		switch {
		case errors.Is(err, unix.ENOENT):
			continue // removed by a finishing command: try again
		case errors.Is(err, unix.ELOOP):
			return fmt.Errorf("protected path %s is a symlink; refusing to run", p)
		case errors.Is(err, unix.ENOTDIR):
			h.extraProtected = append(h.extraProtected, p) // created meanwhile: protect it as it is
			return nil
		case err != nil:
			return fmt.Errorf("placeholder %s: %w", p, err)
		}
		if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
			unix.Close(fd)
			return fmt.Errorf("lock placeholder %s: %w", p, err)
		}
		if sameFile(fd, p) {
			h.locks = append(h.locks, fd)
			return nil
		}
		unix.Close(fd)
	}
	return fmt.Errorf("placeholder %s: keeps changing", p)
}

// placeholderMode marks a placeholder (with being an empty directory).
const placeholderMode = 0o555

func sameFile(fd int, p string) bool {
	var a, b unix.Stat_t
	return unix.Fstat(fd, &a) == nil && unix.Lstat(p, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// removePlaceholders removes the placeholders at paths that nobody holds a
// lock on. It runs in the helper and, as a backstop, in the parent.
func removePlaceholders(paths []string) {
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil && sameFile(fd, p) && isPlaceholderDir(p) {
			unix.Rmdir(p)
		}
		unix.Close(fd)
	}
}

func isPlaceholderDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir() && fi.Mode().Perm() == placeholderMode && isEmptyDir(p)
}

// loUp brings the namespace's loopback interface up, so that servers on
// the sandbox's own 127.0.0.1 work (go test with httptest).
func loUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// ownTemp reports whether p is a private temp directory the sandbox
// created (by its name, and a real directory): the only kind of directory
// the helper ever removes recursively.
func ownTemp(p string) bool {
	if !filepath.IsAbs(p) || !strings.HasPrefix(filepath.Base(p), tempPrefix) || filepath.Clean(p) != p {
		return false
	}
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
