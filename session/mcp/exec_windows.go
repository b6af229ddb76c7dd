package mcp

import (
	"errors"
	"os"
	"os/exec"
)

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		if _, err2 := exec.LookPath(p); err2 == nil {
			return nil
		}
		return err
	}
	if fi.IsDir() {
		return errors.New("is a directory")
	}
	return nil
}
