//go:build unix && !linux && !darwin

package tools

// openDirNoFollow walks dir one component at a time with O_NOFOLLOW.
func openDirNoFollow(dir string) (int, error) { return walkNoFollow(dir) }
