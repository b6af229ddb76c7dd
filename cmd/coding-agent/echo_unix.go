//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// echoOff turns the terminal's echo off and returns what restores it.
func echoOff(f *os.File) func() {
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}
	}
	old := *t
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ECHONL
	if unix.IoctlSetTermios(fd, ioctlSetTermios, t) != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, &old) }
}
