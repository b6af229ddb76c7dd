//go:build unix

package mcp

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New("is a directory")
	}
	return unix.Access(p, unix.X_OK)
}
