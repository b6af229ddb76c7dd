//go:build !unix

package sandbox

import (
	"context"
	"os"
	"path/filepath"
)

// reservePiece checks that the piece name may be created in dir. There is
// no sandbox here to race with, and no flock: the check is not held.
func reservePiece(ctx context.Context, dir, name string) (func(), error) {
	has := func(p string) bool {
		_, err := os.Lstat(filepath.Join(dir, p))
		return err == nil || !os.IsNotExist(err)
	}
	if completesRepo(name, has) {
		return nil, &RepositoryError{Dir: dir, Name: name}
	}
	return func() {}, nil
}
