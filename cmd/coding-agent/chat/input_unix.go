//go:build unix

package chat

import (
	"errors"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// reader reads the terminal in a goroutine of its own that stop ends (a
// blocking read of a terminal cannot be interrupted otherwise): it polls
// the terminal and a wake-up pipe.
type reader struct {
	fd     int
	wr, rd *os.File
	chunks chan []byte
	quit   chan struct{}
	done   chan struct{}
	err    error
}

func startReader(in *os.File) (*reader, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	r := &reader{fd: int(in.Fd()), rd: rd, wr: wr, chunks: make(chan []byte, 64), quit: make(chan struct{}), done: make(chan struct{})}
	go r.loop()
	return r, nil
}

func (r *reader) loop() {
	defer close(r.done)
	defer close(r.chunks)
	fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(r.rd.Fd()), Events: unix.POLLIN}}
	buf := make([]byte, 4096)
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			r.err = err
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0 {
			continue
		}
		n, err := unix.Read(r.fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if n <= 0 {
			r.err = err
			return
		}
		b := make([]byte, n)
		copy(b, buf[:n])
		select {
		case r.chunks <- b:
		case <-r.quit:
			return
		}
	}
}

// stop ends the goroutine and waits for it.
func (r *reader) stop() {
	close(r.quit)
	r.wr.Write([]byte{0})
	<-r.done
	r.wr.Close()
	r.rd.Close()
}

// notifyResize delivers window resizes (SIGWINCH) on c.
func notifyResize(c chan os.Signal) { signal.Notify(c, syscall.SIGWINCH) }
