package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// echoOff turns the console's echo off and returns what restores it.
func echoOff(f *os.File) func() {
	h := windows.Handle(f.Fd())
	var mode uint32
	if windows.GetConsoleMode(h, &mode) != nil {
		return func() {}
	}
	if windows.SetConsoleMode(h, mode&^windows.ENABLE_ECHO_INPUT) != nil {
		return func() {}
	}
	return func() { windows.SetConsoleMode(h, mode) }
}
