//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The git guard keeps a sandboxed command from creating a `.git` anywhere,
// while it runs: an editor's `git status` on the host would otherwise read
// the new `.git/config` and run its core.fsmonitor command unsandboxed.
//
// The seccomp filter (seccompProgram) sends every system call that can
// give a file system entry a name to the helper with SECCOMP_RET_USER_NOTIF:
// mkdir, mknod, rename, link, symlink, creat, openat2, and open/openat with
// O_CREAT. The helper never lets the kernel continue such a call
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE would re-read the path from the
// caller's memory, which another thread can change after the check). It
// copies the arguments once, decides on the copy, and performs the call
// itself, on a thread that has exactly the command's rights (the thread
// that started bash, in the full mode; otherwise an executor thread with
// the same Landlock rules, no capabilities, the same user), with the caller's
// directory descriptors, cwd and umask. The result (an errno, a value, or a
// descriptor installed in the caller) is sent back. The name a call
// creates is always the last component of a path the executor holds; it is
// refused with EPERM when it is `.git` in any letter case, except on the
// private tmpfs of the full mode, which the host never sees and from which
// nothing can be renamed or linked into a writable root (EXDEV).
//
// open(O_CREAT) follows a trailing symlink and creates its target: the
// executor follows such links itself, one at a time, with O_NOFOLLOW on
// the directory it resolved, so the name created is the one it checked.
//
// Paths that name the caller's own descriptors through /proc
// (/proc/self/fd/N, /dev/fd/N, /dev/stdout, /proc/self/cwd, ...) are
// rewritten to the descriptor fetched from the caller, because "self" in
// the executor would be the helper. Other /proc magic links are refused
// with ELOOP (RESOLVE_NO_MAGICLINKS): the executor must never reach the
// helper's own descriptors.

// Legacy x86-64 system call numbers: arm64 has only the *at forms, and the
// unix package defines these names on amd64 only.
const (
	amd64Open    = 2
	amd64Rename  = 82
	amd64Mkdir   = 83
	amd64Creat   = 85
	amd64Link    = 86
	amd64Symlink = 88
	amd64Mknod   = 133
)

// gitTrapped lists the system calls that always go to the git guard;
// open and openat go to it only with O_CREAT (see seccompProgram).
func gitTrapped() []uint32 {
	nrs := []uint32{unix.SYS_MKDIRAT, unix.SYS_MKNODAT, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2,
		unix.SYS_LINKAT, unix.SYS_SYMLINKAT, unix.SYS_OPENAT2}
	if runtime.GOARCH == "amd64" {
		nrs = append(nrs, amd64Mkdir, amd64Mknod, amd64Rename, amd64Link, amd64Symlink, amd64Creat)
	}
	return nrs
}

// Structures of seccomp_unotify(2).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

type seccompNotifAddfd struct {
	ID         uint64
	Flags      uint32
	Srcfd      uint32
	Newfd      uint32
	NewfdFlags uint32
}

type gitOp int

const (
	opOpen    gitOp = iota + 1 // open, openat, creat
	opOpenat2                  // flags, mode and resolve in struct open_how
	opMkdir
	opMknod
	opRename
	opLink
	opSymlink
)

// rawCall is a trapped call's arguments as the caller passed them.
type rawCall struct {
	op           gitOp
	dirA, dirB   int32  // AT_FDCWD when the call has no such argument
	pathA, pathB uint64 // addresses; pathA is the target of symlink
	flags, mode  uint64 // open, rename and link flags; creation mode
	dev          uint64
	howSize      uint64 // openat2: the how pointer is flags
}

func decodeCall(d *seccompData) (rawCall, bool) {
	a := d.Args
	c := rawCall{dirA: unix.AT_FDCWD, dirB: unix.AT_FDCWD}
	if runtime.GOARCH == "amd64" {
		switch d.Nr {
		case amd64Open:
			c.op, c.pathA, c.flags, c.mode = opOpen, a[0], a[1], a[2]
			return c, true
		case amd64Creat:
			c.op, c.pathA, c.flags, c.mode = opOpen, a[0], unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, a[1]
			return c, true
		case amd64Mkdir:
			c.op, c.pathA, c.mode = opMkdir, a[0], a[1]
			return c, true
		case amd64Mknod:
			c.op, c.pathA, c.mode, c.dev = opMknod, a[0], a[1], a[2]
			return c, true
		case amd64Rename:
			c.op, c.pathA, c.pathB = opRename, a[0], a[1]
			return c, true
		case amd64Link:
			c.op, c.pathA, c.pathB = opLink, a[0], a[1]
			return c, true
		case amd64Symlink:
			c.op, c.pathA, c.pathB = opSymlink, a[0], a[1]
			return c, true
		}
	}
	switch d.Nr {
	case unix.SYS_OPENAT:
		c.op, c.dirA, c.pathA, c.flags, c.mode = opOpen, int32(a[0]), a[1], a[2], a[3]
	case unix.SYS_OPENAT2:
		c.op, c.dirA, c.pathA, c.flags, c.howSize = opOpenat2, int32(a[0]), a[1], a[2], a[3]
	case unix.SYS_MKDIRAT:
		c.op, c.dirA, c.pathA, c.mode = opMkdir, int32(a[0]), a[1], a[2]
	case unix.SYS_MKNODAT:
		c.op, c.dirA, c.pathA, c.mode, c.dev = opMknod, int32(a[0]), a[1], a[2], a[3]
	case unix.SYS_RENAMEAT:
		c.op, c.dirA, c.pathA, c.dirB, c.pathB = opRename, int32(a[0]), a[1], int32(a[2]), a[3]
	case unix.SYS_RENAMEAT2:
		c.op, c.dirA, c.pathA, c.dirB, c.pathB, c.flags = opRename, int32(a[0]), a[1], int32(a[2]), a[3], a[4]
	case unix.SYS_LINKAT:
		c.op, c.dirA, c.pathA, c.dirB, c.pathB, c.flags = opLink, int32(a[0]), a[1], int32(a[2]), a[3], a[4]
	case unix.SYS_SYMLINKAT:
		c.op, c.pathA, c.dirB, c.pathB = opSymlink, a[0], int32(a[1]), a[2]
	default:
		return c, false
	}
	return c, true
}

// pathArg is a path ready for the executor: dir is a descriptor fetched
// from the caller (or AT_FDCWD for an absolute path). magic marks a path
// the supervisor rewrote to the helper's own /proc/self/fd link of a
// descriptor fetched from the caller; the executor uses it as it is.
type pathArg struct {
	dir   int
	path  string
	magic bool
}

// gitReq is one trapped call, copied out of the caller.
type gitReq struct {
	id       uint64
	op       gitOp
	a, b     pathArg
	flags    uint64
	mode     uint64
	dev      uint64
	resolve  uint64 // openat2
	umask    int    // -1: the call does not use it
	fds      []int  // descriptors to close after the call
	cloexec  bool   // the descriptor returned to the caller
	isOpen   bool
	symlinkT string // the target of symlink
}

// gitGuard is the supervisor of one sandboxed command's trapped calls.
type gitGuard struct {
	listener int
	rules    []llRule
	denyTCP  bool
	privDevs []uint64 // devices of the private tmpfs mounts
	work     chan *gitReq
	inflight sync.WaitGroup

	cookie uint64 // in the sixth argument of the guard's own calls (seccompProgram)
	// inline: serve runs on the restricted thread and performs calls
	// itself (full mode); otherwise on an unrestricted one that hands
	// every call to an executor (degraded mode, see newGitGuard).
	inline bool
	slow   chan seccompNotif

	mu        sync.Mutex // executors, broken
	executors int
	broken    error // an executor could not restrict itself
}

// maxExecutors bounds the executor threads. An emulated call that may
// block (open(O_CREAT) of an existing FIFO waits for a reader, a lock of
// a directory held by someone else) goes to an executor, and another one
// starts when all are busy.
const maxExecutors = 16

// newGitGuard prepares the supervisor of listener; rules are the
// command's Landlock rules, masked the private tmpfs mounts (full mode),
// cookie the filter's (seccompProgram).
//
// inline is for the full mode only. The serving thread is in the
// command's Landlock domain, so the command may signal it; as PID 1 of the
// namespaces the helper ignores SIGKILL and SIGSTOP from inside, and its
// death would end every process of the command anyway. In the degraded
// mode the helper is only a subreaper: a command that could stop or kill
// it would leave its orphans running, so serve runs on an unrestricted
// thread, outside the domain.
func newGitGuard(listener int, rules []llRule, denyTCP bool, masked []string, cookie uint64, inline bool) *gitGuard {
	g := &gitGuard{listener: listener, rules: rules, denyTCP: denyTCP, cookie: cookie, inline: inline,
		work: make(chan *gitReq), slow: make(chan seccompNotif)}
	for _, d := range masked {
		var st unix.Stat_t
		if unix.Stat(d, &st) == nil {
			g.privDevs = append(g.privDevs, st.Dev)
		}
	}
	return g
}

// serve receives notifications until no process uses the filter any more.
// It runs on the thread that started bash: restricted like the command
// (the same Landlock domain, which lets it read the callers' memory and
// descriptors; no capabilities; the same filter, passed with the cookie),
// it performs most calls itself, with one wake-up of the caller and one of
// itself per call. What may block goes to an executor; a caller it may not
// read (one that made itself undumpable) goes to the unrestricted
// supervisor goroutine (slowPath).
func (g *gitGuard) serve() {
	g.inflight.Add(1) // slowPath's
	go g.slowPath()
	defer func() {
		close(g.slow)
		// Executors may still be answering; the descriptor number must
		// not be reused under them.
		go func() { g.inflight.Wait(); unix.Close(g.listener) }()
	}()
	fds := []unix.PollFd{{Fd: int32(g.listener), Events: unix.POLLIN}}
	for {
		fds[0].Revents = 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: every process of the command is gone
		}
		var n seccompNotif
		if err := ioctlPtr(g.listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			if err == unix.EINTR || err == unix.ENOENT {
				continue // the caller was interrupted or died meanwhile
			}
			return
		}
		r, errno := g.prepare(&n)
		switch {
		case errno == 0:
		case g.inline && (errno == unix.EPERM || errno == unix.EACCES || errno == unix.EFAULT):
			// Perhaps only this thread may not read the caller.
			closeAll(r.fds)
			g.slow <- n
			continue
		default:
			closeAll(r.fds)
			g.send(n.ID, 0, errno)
			continue
		}
		if !g.valid(n.ID) {
			closeAll(r.fds)
			continue
		}
		g.inflight.Add(1)
		if !g.inline || !g.handle(r, true) {
			g.dispatch(r)
		}
	}
}

// slowPath prepares, on an unrestricted thread, the calls that serve could
// not read, and hands them to executors.
func (g *gitGuard) slowPath() {
	defer g.inflight.Done()
	for n := range g.slow {
		r, errno := g.prepare(&n)
		if errno != 0 {
			closeAll(r.fds)
			g.send(n.ID, 0, errno)
			continue
		}
		if !g.valid(n.ID) {
			closeAll(r.fds)
			continue
		}
		g.inflight.Add(1)
		g.dispatch(r)
	}
}

// prepare copies the call's arguments out of the caller and fetches the
// directories it is relative to, on the supervisor's unrestricted thread.
func (g *gitGuard) prepare(n *seccompNotif) (*gitReq, unix.Errno) {
	tid := int(n.Pid)
	r := &gitReq{id: n.ID, umask: -1}
	c, ok := decodeCall(&n.Data)
	if !ok {
		return r, unix.ENOSYS
	}
	r.op, r.flags, r.mode, r.dev = c.op, c.flags, c.mode, c.dev
	pidfd := -1
	defer func() {
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
	}()
	getfd := func(fd int) (int, unix.Errno) {
		if pidfd < 0 {
			// PIDFD_THREAD (O_EXCL, Linux 6.9): the caller may be a thread
			// with its own descriptor table.
			pidfd, _ = unix.PidfdOpen(tid, unix.O_EXCL)
		}
		var nfd int
		var err error
		if pidfd >= 0 {
			nfd, err = unix.PidfdGetfd(pidfd, fd, 0)
		} else {
			// Older kernels, a thread that does not lead its process: an
			// O_PATH descriptor of the same file, which serves as a
			// directory and can be reopened through /proc/self/fd.
			nfd, err = unix.Open("/proc/"+strconv.Itoa(tid)+"/fd/"+strconv.Itoa(fd), unix.O_PATH|unix.O_CLOEXEC, 0)
			if errors.Is(err, unix.ENOENT) {
				err = unix.EBADF
			}
		}
		if err != nil {
			return -1, errnoOf(err)
		}
		r.fds = append(r.fds, nfd)
		return nfd, 0
	}
	cwd := func() (int, unix.Errno) {
		fd, err := unix.Open("/proc/"+strconv.Itoa(tid)+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, errnoOf(err)
		}
		r.fds = append(r.fds, fd)
		return fd, 0
	}
	// arg fetches what a path argument is relative to.
	arg := func(dirfd int32, addr uint64, emptyOK, needDir bool) (pathArg, unix.Errno) {
		p, e := readPath(tid, addr)
		if e != 0 {
			return pathArg{}, e
		}
		if n, rest, ok := procSelf(p, tid); ok {
			var fd int
			if n >= 0 {
				fd, e = getfd(n)
				if e == unix.EBADF {
					e = unix.ENOENT
				}
			} else {
				fd, e = cwd()
			}
			if e != 0 {
				return pathArg{}, e
			}
			if rest == "" && n >= 0 {
				return pathArg{dir: unix.AT_FDCWD, path: "/proc/self/fd/" + strconv.Itoa(fd), magic: true}, 0
			}
			if rest = strings.TrimLeft(rest, "/"); rest == "" {
				rest = "."
			}
			return pathArg{dir: fd, path: rest}, 0
		}
		if p == "" && !emptyOK {
			return pathArg{}, unix.ENOENT
		}
		if strings.HasPrefix(p, "/") && !needDir {
			return pathArg{dir: unix.AT_FDCWD, path: p}, 0
		}
		var fd int
		switch {
		case dirfd == unix.AT_FDCWD:
			fd, e = cwd()
		case dirfd < 0:
			e = unix.EBADF
		default:
			fd, e = getfd(int(dirfd))
		}
		return pathArg{dir: fd, path: p}, e
	}
	var e unix.Errno
	switch c.op {
	case opSymlink:
		if r.symlinkT, e = readPath(tid, c.pathA); e != 0 {
			return r, e
		}
	case opOpenat2:
		how, e := readOpenHow(tid, c.flags, c.howSize)
		if e != 0 {
			return r, e
		}
		r.flags, r.mode, r.resolve = how.Flags, how.Mode, how.Resolve
		beneath := how.Resolve&(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT) != 0
		if r.a, e = arg(c.dirA, c.pathA, false, beneath); e != 0 {
			return r, e
		}
	default:
		emptyOK := c.op == opLink && c.flags&unix.AT_EMPTY_PATH != 0
		if r.a, e = arg(c.dirA, c.pathA, emptyOK, false); e != 0 {
			return r, e
		}
	}
	if c.op == opRename || c.op == opLink || c.op == opSymlink {
		if r.b, e = arg(c.dirB, c.pathB, false, false); e != 0 {
			return r, e
		}
	}
	r.isOpen = c.op == opOpen || c.op == opOpenat2
	r.cloexec = r.isOpen && r.flags&unix.O_CLOEXEC != 0
	if r.isOpen || c.op == opMkdir || c.op == opMknod {
		if r.umask, e = readUmask(tid); e != 0 {
			return r, e
		}
	}
	return r, 0
}

// procSelf recognises the paths through which the kernel resolves the
// caller's own descriptors or cwd: /proc/self/fd/N, /proc/thread-self/fd/N,
// /proc/TID/fd/N, /dev/fd/N, /dev/stdin|stdout|stderr (n = N), and
// /proc/self/cwd (n = -1). rest is what follows.
func procSelf(p string, tid int) (n int, rest string, ok bool) {
	for i, name := range []string{"/dev/stdin", "/dev/stdout", "/dev/stderr"} {
		if r, found := strings.CutPrefix(p, name); found && (r == "" || r[0] == '/') {
			return i, r, true
		}
	}
	for _, pre := range []string{"/proc/self/", "/proc/thread-self/", "/proc/" + strconv.Itoa(tid) + "/", "/dev/"} {
		r, found := strings.CutPrefix(p, pre)
		if !found {
			continue
		}
		if pre != "/dev/" {
			if r == "cwd" || strings.HasPrefix(r, "cwd/") {
				return -1, r[3:], true
			}
		}
		r, found = strings.CutPrefix(r, "fd/")
		if !found {
			return 0, "", false
		}
		num, rest, _ := strings.Cut(r, "/")
		fd, err := strconv.Atoi(num)
		if err != nil || fd < 0 || num != strconv.Itoa(fd) {
			return 0, "", false
		}
		if strings.Contains(r, "/") {
			rest = "/" + rest
		}
		return fd, rest, true
	}
	return 0, "", false
}

// readRemote copies up to len(buf) bytes at addr from process tid, page by
// page so that a string that ends before an unmapped page is read whole.
func readRemote(tid int, addr uint64, buf []byte) int {
	page := uint64(os.Getpagesize())
	var local []unix.Iovec
	var remote []unix.RemoteIovec
	for off := uint64(0); off < uint64(len(buf)); {
		n := min(page-(addr+off)%page, uint64(len(buf))-off)
		lv := unix.Iovec{Base: &buf[off]}
		lv.SetLen(int(n))
		local = append(local, lv)
		remote = append(remote, unix.RemoteIovec{Base: uintptr(addr + off), Len: int(n)})
		off += n
	}
	got, err := unix.ProcessVMReadv(tid, local, remote, 0)
	if err != nil {
		return 0
	}
	return got
}

// readPath copies a NUL-terminated path from the caller.
func readPath(tid int, addr uint64) (string, unix.Errno) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	buf := make([]byte, unix.PathMax)
	got := readRemote(tid, addr, buf)
	i := bytes.IndexByte(buf[:got], 0)
	switch {
	case i >= 0:
		return string(buf[:i]), 0
	case got == len(buf):
		return "", unix.ENAMETOOLONG
	}
	return "", unix.EFAULT
}

// readOpenHow copies openat2's struct open_how, with the kernel's checks
// of its size.
func readOpenHow(tid int, addr, size uint64) (unix.OpenHow, unix.Errno) {
	var how unix.OpenHow
	const ver0 = uint64(unsafe.Sizeof(how))
	switch {
	case size < ver0:
		return how, unix.EINVAL
	case size > uint64(os.Getpagesize()):
		return how, unix.E2BIG
	case addr == 0:
		return how, unix.EFAULT
	}
	buf := make([]byte, size)
	if readRemote(tid, addr, buf) != len(buf) {
		return how, unix.EFAULT
	}
	for _, c := range buf[ver0:] {
		if c != 0 {
			return how, unix.E2BIG
		}
	}
	how = *(*unix.OpenHow)(unsafe.Pointer(&buf[0]))
	return how, 0
}

// readUmask reads the umask of thread tid.
func readUmask(tid int) (int, unix.Errno) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, errnoOf(err)
	}
	_, rest, ok := strings.Cut(string(b), "\nUmask:")
	if !ok {
		return 0, unix.ENOSYS
	}
	line, _, _ := strings.Cut(rest, "\n")
	m, err := strconv.ParseUint(strings.TrimSpace(line), 8, 32)
	if err != nil {
		return 0, unix.ENOSYS
	}
	return int(m), 0
}

func (g *gitGuard) valid(id uint64) bool {
	return ioctlPtr(g.listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == nil
}

// dispatch hands r (counted in inflight) to an idle executor, starting
// one when all are busy.
func (g *gitGuard) dispatch(r *gitReq) {
	select {
	case g.work <- r:
		return
	default:
	}
	g.mu.Lock()
	if g.executors < maxExecutors {
		g.spawn()
	}
	n := g.executors
	g.mu.Unlock()
	if n == 0 {
		closeAll(r.fds)
		g.send(r.id, 0, unix.EPERM)
		g.inflight.Done()
		return
	}
	g.work <- r
}

// spawn starts an executor and waits until it is restricted; g.mu is
// held. If it cannot restrict itself, no call is ever performed with more
// rights than the command's: without an executor every call handed to one
// fails with EPERM.
func (g *gitGuard) spawn() {
	if g.broken != nil {
		return
	}
	ready := make(chan error, 1)
	go g.executor(ready)
	if err := <-ready; err != nil {
		g.broken = err
		fmt.Fprintf(os.Stderr, "sandbox: cannot start the executor of file creations: %v\n", err)
		return
	}
	g.executors++
}

// executor restricts its own locked thread to the command's rights and
// performs calls. It never unlocks: the thread ends with the goroutine.
func (g *gitGuard) executor(ready chan<- error) {
	runtime.LockOSThread()
	// Its own cwd and umask (fs_struct), set per call.
	err := unix.Unshare(unix.CLONE_FS)
	if err != nil {
		err = fmt.Errorf("unshare CLONE_FS: %w", err)
	} else if err = landlockRestrictThread(g.rules, g.denyTCP); err == nil {
		err = dropCaps()
	}
	ready <- err
	if err != nil {
		return
	}
	for r := range g.work {
		g.handle(r, false)
	}
}

// handle performs r and answers it. inline is serve's own thread: there
// a call that could block is not performed but left (handle returns
// false, nothing done, nothing answered) for an executor.
func (g *gitGuard) handle(r *gitReq, inline bool) bool {
	if inline && r.isOpen && r.flags&unix.O_ACCMODE == unix.O_RDONLY && r.flags&unix.O_CREAT != 0 {
		return false // a read-only open of a FIFO waits for a writer: rare, left to an executor
	}
	if r.umask >= 0 {
		unix.Umask(r.umask)
	}
	x := &execCall{g: g, r: r, lock: -1, inline: inline}
	defer closeAll(x.fds)
	defer x.unlock()
	if r.isOpen {
		fd, e := x.open()
		if x.wouldBlock {
			return false
		}
		if e != 0 {
			g.done(r, 0, e)
			return true
		}
		g.sendFD(r.id, fd, r.cloexec)
		unix.Close(fd)
		g.done(r, -1, 0)
		return true
	}
	e := x.other()
	if x.wouldBlock {
		return false
	}
	g.done(r, 0, e)
	return true
}

// done answers r (unless val < 0: answered already), closes its
// descriptors and counts it out of inflight.
func (g *gitGuard) done(r *gitReq, val int64, errno unix.Errno) {
	if val >= 0 {
		g.send(r.id, val, errno)
	}
	closeAll(r.fds)
	g.inflight.Done()
}

// send answers the call with an error, or with val when errno is 0. ENOENT
// means that the caller died or was interrupted: nothing to do.
func (g *gitGuard) send(id uint64, val int64, errno unix.Errno) {
	resp := seccompNotifResp{ID: id, Val: val}
	if errno != 0 {
		resp.Val, resp.Error = 0, -int32(errno)
	}
	ioctlPtr(g.listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// sendFD installs fd in the caller and answers the call with its number.
func (g *gitGuard) sendFD(id uint64, fd int, cloexec bool) {
	a := seccompNotifAddfd{ID: id, Flags: unix.SECCOMP_ADDFD_FLAG_SEND, Srcfd: uint32(fd)}
	if cloexec {
		a.NewfdFlags = unix.O_CLOEXEC
	}
	if err := ioctlPtr(g.listener, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&a)); err != nil && err != unix.ENOENT {
		g.send(id, 0, errnoOf(err)) // EMFILE: the caller's limit
	}
}

// execCall performs one call on an executor thread.
// sys makes a system call that the filter would send to the guard, with
// the cookie that lets the guard's own thread make it (seccompProgram).
func (g *gitGuard) sys(nr, a0, a1, a2, a3, a4 uintptr) unix.Errno {
	_, e := g.sysv(nr, a0, a1, a2, a3, a4)
	return e
}

func (g *gitGuard) sysv(nr, a0, a1, a2, a3, a4 uintptr) (uintptr, unix.Errno) {
	r, _, e := unix.Syscall6(nr, a0, a1, a2, a3, a4, uintptr(g.cookie))
	return r, e
}

func (g *gitGuard) openat2(dir int, path string, how *unix.OpenHow) (int, unix.Errno) {
	p := cstr(path)
	fd, e := g.sysv(unix.SYS_OPENAT2, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0)
	return int(fd), e
}

type execCall struct {
	g    *gitGuard
	r    *gitReq
	fds  []int
	lock int // a directory mayCreate locked, or -1
	// inline: on serve's thread, where nothing may block; wouldBlock:
	// the call was not performed because it could have.
	inline, wouldBlock bool
}

// isGitName reports whether name is the protected `.git`, in any case
// (case-insensitive file systems and git on them treat `.GIT` as `.git`).
func isGitName(name string) bool { return strings.EqualFold(name, GitName) }

// lastName is the name a path creates: its last component.
func lastName(p string) string {
	p = strings.TrimRight(p, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// splitPath splits p into its directory part ("" for none) and its last
// component, which keeps its trailing slashes: "a/b/" gives "a/", "b/".
func splitPath(p string) (dir, base string) {
	t := strings.TrimRight(p, "/")
	if t == "" {
		return "/", "."
	}
	i := strings.LastIndexByte(t, '/')
	if i < 0 {
		return "", p
	}
	return p[:i+1], p[i+1:]
}

// parent opens the directory of a's last component with the caller's
// resolve flags and no magic links, and returns it with the component.
func (x *execCall) parent(a pathArg, resolve uint64) (int, string, unix.Errno) {
	if a.magic {
		return a.dir, a.path, 0
	}
	d, base := splitPath(a.path)
	if d == "" {
		return a.dir, base, 0
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolve | unix.RESOLVE_NO_MAGICLINKS}
	fd, e := x.g.openat2(a.dir, d, &how)
	if e != 0 {
		return -1, "", e
	}
	x.fds = append(x.fds, fd)
	return fd, base, 0
}

// mayCreate reports whether the name base may be created in dir: not
// `.git`, and not the last piece of a repository under another name
// (repository.go). For a piece, dir stays locked until the call is done,
// or until mayCreate is asked about the next name.
func (x *execCall) mayCreate(dir int, base string) bool {
	x.unlock()
	name := lastName(base)
	git, piece := isGitName(name), isRepoPiece(name)
	if !git && !piece {
		return true
	}
	var st unix.Stat_t
	if len(x.g.privDevs) > 0 && unix.Fstat(dir, &st) == nil && slices.Contains(x.g.privDevs, st.Dev) {
		return true // the private tmpfs of the full mode
	}
	if git {
		return false
	}
	fd, err := unix.Openat(dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	for {
		// Blocks while another creation of a piece in dir (this command's,
		// another command's, a file tool's) holds the lock; another
		// executor serves the command's other calls meanwhile.
		how := unix.LOCK_EX
		if x.inline {
			how |= unix.LOCK_NB
		}
		err = unix.Flock(fd, how)
		if err == unix.EWOULDBLOCK && x.inline {
			x.wouldBlock = true
		}
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || completesRepo(name, func(p string) bool { return hasEntry(fd, p) }) {
		unix.Close(fd)
		return false
	}
	x.lock = fd
	return true
}

// unlock releases the lock mayCreate took, if any.
func (x *execCall) unlock() {
	if x.lock >= 0 {
		unix.Close(x.lock)
		x.lock = -1
	}
}

// other performs the calls that return 0 or an error.
func (x *execCall) other() unix.Errno {
	r := x.r
	switch r.op {
	case opMkdir, opMknod:
		dir, base, e := x.parent(r.a, 0)
		if e != 0 {
			return e
		}
		if !x.mayCreate(dir, base) {
			return unix.EPERM
		}
		p := cstr(base)
		if r.op == opMkdir {
			return x.g.sys(unix.SYS_MKDIRAT, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(r.mode), 0, 0)
		}
		return x.g.sys(unix.SYS_MKNODAT, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(r.mode), uintptr(r.dev), 0)
	case opSymlink:
		dir, base, e := x.parent(r.b, 0)
		if e != 0 {
			return e
		}
		if !x.mayCreate(dir, base) {
			return unix.EPERM
		}
		t, p := cstr(r.symlinkT), cstr(base)
		return x.g.sys(unix.SYS_SYMLINKAT, uintptr(unsafe.Pointer(t)), uintptr(dir), uintptr(unsafe.Pointer(p)), 0, 0)
	case opLink, opRename:
		odir, obase := r.a.dir, r.a.path
		if !(r.op == opLink && r.a.path == "") {
			var e unix.Errno
			if odir, obase, e = x.parent(r.a, 0); e != 0 {
				return e
			}
		}
		ndir, nbase, e := x.parent(r.b, 0)
		if e != 0 {
			return e
		}
		if !x.mayCreate(ndir, nbase) {
			return unix.EPERM
		}
		op, np := cstr(obase), cstr(nbase)
		if r.op == opLink {
			return x.g.sys(unix.SYS_LINKAT, uintptr(odir), uintptr(unsafe.Pointer(op)), uintptr(ndir), uintptr(unsafe.Pointer(np)), uintptr(r.flags))
		}
		// RENAME_EXCHANGE gives the old path's name to the new object too.
		if r.flags&unix.RENAME_EXCHANGE != 0 && !x.mayCreate(odir, obase) {
			return unix.EPERM
		}
		return x.g.sys(unix.SYS_RENAMEAT2, uintptr(odir), uintptr(unsafe.Pointer(op)), uintptr(ndir), uintptr(unsafe.Pointer(np)), uintptr(r.flags))
	}
	return unix.ENOSYS
}

// maxSymlinks is the kernel's bound on symlinks followed in one lookup.
const maxSymlinks = 40

// open performs open, openat, creat and openat2 and returns the new
// descriptor (close-on-exec in the helper).
func (x *execCall) open() (int, unix.Errno) {
	if !x.inline || x.r.flags&(unix.O_NONBLOCK|unix.O_PATH) != 0 {
		return x.openWith(0)
	}
	// On serve's thread: O_NONBLOCK, so that a FIFO without a reader (or
	// a file under a lease) does not block the guard; such a call goes to
	// an executor, which opens it as asked. Nothing was created then.
	fd, e := x.openWith(unix.O_NONBLOCK)
	switch {
	case e == unix.ENXIO || e == unix.EAGAIN:
		x.wouldBlock = true
		return -1, e
	case e != 0:
		return -1, e
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	if err != nil {
		unix.Close(fd)
		return -1, errnoOf(err)
	}
	return fd, 0
}

// openWith is open with extra flags.
func (x *execCall) openWith(extra uint64) (int, unix.Errno) {
	r := x.r
	legacy := r.op == opOpen
	flags, mode := r.flags|extra, r.mode
	if legacy {
		flags = uint64(uint32(flags))
		if flags&unix.O_PATH != 0 {
			// open(2) ignores the other flags with O_PATH: no creation.
			flags &= unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		}
		if flags&unix.O_CREAT != 0 || flags&unix.O_TMPFILE == unix.O_TMPFILE {
			mode &= 0o7777
		} else {
			mode = 0
		}
	}
	// one opens name in dir; resolve applies to openat2 only.
	one := func(dir int, name string, fl uint64, resolve uint64) (int, unix.Errno) {
		if legacy && resolve == 0 {
			p := cstr(name)
			fd, e := x.g.sysv(unix.SYS_OPENAT, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(fl|unix.O_CLOEXEC), uintptr(mode), 0)
			if e != 0 {
				return -1, e
			}
			return int(fd), 0
		}
		how := unix.OpenHow{Flags: fl | unix.O_CLOEXEC, Mode: mode, Resolve: resolve}
		return x.g.openat2(dir, name, &how)
	}
	if r.a.magic {
		// The caller's own descriptor, reopened: the link exists, so
		// nothing is created.
		return one(r.a.dir, r.a.path, flags, 0)
	}
	res := r.resolve | unix.RESOLVE_NO_MAGICLINKS
	if legacy {
		res = 0 // the parent walk below refuses magic links
	}
	creates := flags&unix.O_CREAT != 0 && flags&unix.O_PATH == 0
	trailing := strings.HasSuffix(r.a.path, "/")
	if !creates || trailing {
		// Nothing gets a name (O_CREAT with a trailing slash is EISDIR).
		if !legacy {
			return one(r.a.dir, r.a.path, flags, res)
		}
		dir, base, e := x.parent(r.a, 0)
		if e != 0 {
			return -1, e
		}
		return one(dir, base, flags, 0)
	}
	if r.resolve&(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT) != 0 {
		// The walk is relative to the caller's root or dirfd: leave it to
		// openat2, and do not follow a trailing symlink for creation.
		if n := lastName(r.a.path); isGitName(n) || isRepoPiece(n) {
			return -1, unix.EPERM // no directory here to check or lock
		}
		fd, e := one(r.a.dir, r.a.path, flags|unix.O_NOFOLLOW, res)
		if e != unix.ELOOP || flags&unix.O_NOFOLLOW != 0 || r.resolve&unix.RESOLVE_NO_SYMLINKS != 0 {
			return fd, e
		}
		fd, e = one(r.a.dir, r.a.path, flags&^(unix.O_CREAT|unix.O_EXCL), res)
		if e == unix.ENOENT {
			e = unix.EPERM // creation through a dangling symlink is not emulated here
		}
		return fd, e
	}
	dir, base, e := x.parent(r.a, r.resolve&^(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT))
	if e != 0 {
		return -1, e
	}
	if legacy {
		res = 0
	}
	for hops := 0; ; hops++ {
		if !x.mayCreate(dir, base) {
			return -1, unix.EPERM
		}
		if flags&unix.O_EXCL != 0 {
			// O_CREAT|O_EXCL never follows a trailing symlink.
			return one(dir, base, flags, res)
		}
		fd, e := one(dir, base, flags|unix.O_NOFOLLOW, res)
		if e != unix.ELOOP || flags&unix.O_NOFOLLOW != 0 || r.resolve&unix.RESOLVE_NO_SYMLINKS != 0 {
			return fd, e
		}
		// base is a symlink, which open(O_CREAT) follows and whose target
		// it creates when missing: follow it here, one link at a time.
		if hops >= maxSymlinks {
			return -1, unix.ELOOP
		}
		var sfs unix.Statfs_t
		if unix.Fstatfs(dir, &sfs) == nil && sfs.Type == unix.PROC_SUPER_MAGIC {
			return -1, unix.ELOOP // a /proc magic link: see the package comment
		}
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dir, base, buf)
		if err != nil {
			return -1, errnoOf(err)
		}
		target := string(buf[:n])
		switch {
		case target == "":
			return -1, unix.ENOENT
		case strings.HasSuffix(target, "/"):
			return -1, unix.EISDIR
		}
		ndir, nbase, e := x.parent(pathArg{dir: dir, path: target}, r.resolve&^(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT))
		if e != 0 {
			return -1, e
		}
		dir, base = ndir, nbase
	}
}

// cstr returns a NUL-terminated copy of s for a raw system call. The
// strings come from NUL-terminated memory or readlink, so none holds a NUL.
func cstr(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

func rawErr(_, _ uintptr, e unix.Errno) unix.Errno { return e }

func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	if err == nil {
		return 0
	}
	return unix.EIO
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
