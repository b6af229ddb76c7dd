//go:build !unix

package chat

import (
	"errors"
	"os"
)

type reader struct{ chunks chan []byte }

func startReader(in *os.File) (*reader, error) {
	return nil, errors.New("chat is not available on this system yet; use --print, web or serve")
}

func (r *reader) stop() {}

func notifyResize(c chan os.Signal) {}
