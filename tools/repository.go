package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/coding-agent/coding-agent/sandbox"
)

// reserveCreate applies the sandbox's rule against repositories under
// another name than .git (sandbox.ReserveCreate) to writing canon: a
// PermissionError when the write would give a directory its last piece
// (HEAD, objects, refs, commondir), denied under every preset like .git.
// Otherwise the returned release is called once the file is in place.
func reserveCreate(ctx context.Context, tool, abs, canon string) (func(), error) {
	release, err := sandbox.ReserveCreate(ctx, canon)
	var re *sandbox.RepositoryError
	switch {
	case errors.As(err, &re):
		return nil, &PermissionError{Path: abs, Reason: fmt.Sprintf("%s: %v; nothing was written", tool, re)}
	case err != nil:
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return release, nil
}
