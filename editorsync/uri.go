package editorsync

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// URIToPath returns the absolute, cleaned file path named by a file:// URI.
// Percent-encoded bytes are decoded, so "file:///tmp/caf%C3%A9.txt" is
// "/tmp/café.txt". Other schemes (untitled:, vscode-notebook-cell:, …), hosts
// other than "localhost", relative paths, queries and fragments are
// rejected: they do not name a file this process can see.
func URIToPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("uri %q: %w", uri, err)
	}
	if u.Scheme != "file" {
		if u.Scheme == "" {
			return "", fmt.Errorf("uri %q: no scheme; want a file:// URI", uri)
		}
		return "", fmt.Errorf("uri %q: scheme %q is not supported; only file:// URIs name files on disk", uri, u.Scheme)
	}
	if u.Opaque != "" {
		return "", fmt.Errorf("uri %q: not an absolute file:// URI", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("uri %q: host %q is not supported; only local files", uri, u.Host)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.Contains(uri, "#") {
		return "", fmt.Errorf("uri %q: a file URI has no query or fragment (encode '?' as %%3F and '#' as %%23)", uri)
	}
	p := u.Path
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("uri %q: path %q is not absolute", uri, p)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("uri %q: path contains a NUL byte", uri)
	}
	return filepath.Clean(p), nil
}

// PathToURI returns the file:// URI of an absolute path, percent-encoding
// bytes that may not appear in a URI path (spaces, '#', '?', '%', non-ASCII).
func PathToURI(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Clean(path))}
	s := u.String()
	if !strings.HasPrefix(s, "file://") {
		// url.URL omits "//" when there is no host; file URIs always carry it.
		s = "file://" + strings.TrimPrefix(s, "file:")
	}
	return s
}
