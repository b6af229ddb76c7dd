package editorsync

// pendingForTest returns the number of paths in the burst in progress.
func (s *Sync) pendingForTest() int { return int(s.npending.Load()) }
