// Package editorsync keeps an agent session in step with the editor: it
// mirrors the editor's open documents (text, version, whether the buffer
// differs from disk), watches the session roots and the directories of open
// documents for changes on disk, attributes those changes to the tool call
// that made them, and computes the diffs a bash command left behind.
//
// The entry point is [New], which returns a [Sync] for one session. A
// [Documents] value can also be used on its own. The package knows nothing
// about JSON-RPC or ACP: package session converts its types to the wire
// types of PROTOCOL.md §8.
//
// # Batching
//
// Raw file-system events are collected per path and delivered as one batch
// when the burst has been quiet for [DefaultQuiet] (20 ms), and at the latest
// [DefaultMaxDelay] (50 ms) after the first event of the burst, so a change
// is reported within about 50 ms plus the cost of examining the changed
// files. Each path appears at most once per batch. Its kind is decided from
// whether the path existed before the burst and exists after it, which turns
// atomic-rename writes (temp file + rename, or rename to a backup + write)
// into one "modified" entry and hides temp files that come and go within
// one burst.
package editorsync
