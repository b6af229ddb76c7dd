package sandbox

import (
	"fmt"
	"regexp"
	"strings"
)

// seatbeltBase is the start of every profile. Seatbelt applies the last
// matching rule, so the protected-storage denials come last.
const seatbeltBase = `(version 1)
(allow default)
(deny network*)
(deny file-write*)
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty") (regex #"^/dev/fd/"))
(allow file-write* (subpath (param "TMP")))
`

// seatbeltProfile returns the Seatbelt profile of pl and the sandbox-exec
// parameters (-D NAME=VALUE) it refers to. Paths travel as parameters, so
// they need no quoting in the profile, except in the regular expression
// that forbids a `.git` at any depth of a writable root. temp is the
// command's private temp directory. All paths must be real paths (on
// macOS /tmp is /private/tmp).
func seatbeltProfile(pl *plan, temp string) (string, []string, error) {
	var b strings.Builder
	b.WriteString(seatbeltBase)
	params := []string{"-D", "TMP=" + temp}
	param := func(name, value string) string {
		params = append(params, "-D", name+"="+value)
		return name
	}
	if pl.preset == WorkspaceWrite {
		for i, r := range pl.roots {
			fmt.Fprintf(&b, "(allow file-write* (subpath (param %q)))\n", param(fmt.Sprintf("ROOT%d", i), r))
		}
		for i, r := range pl.roots {
			re, err := seatbeltRegexPath(r)
			if err != nil {
				return "", nil, err
			}
			// A .git anywhere below the root: existing or not, directory
			// or file, and everything below it.
			fmt.Fprintf(&b, "(deny file-write* (regex #\"^%s/(.*/)?\\.git(/.*)?$\")) ; root %d\n", re, i)
		}
	}
	// Protected paths, existing or not: the path itself (rename, unlink,
	// creation) and everything below it.
	for i, p := range concat(pl.protected, pl.missing) {
		n := param(fmt.Sprintf("P%d", i), p)
		fmt.Fprintf(&b, "(deny file-write* (literal (param %q)) (subpath (param %q)))\n", n, n)
	}
	// Directories between a root and a protected path cannot be renamed
	// or removed, so the protected path cannot be moved away.
	for i, d := range pl.pins {
		fmt.Fprintf(&b, "(deny file-write* (literal (param %q)))\n", param(fmt.Sprintf("D%d", i), d))
	}
	return b.String(), params, nil
}

// seatbeltRegexPath quotes a path for a Seatbelt #"..." regular
// expression. Paths with a double quote or a control character are
// refused rather than escaped.
func seatbeltRegexPath(p string) (string, error) {
	if strings.ContainsAny(p, "\"\n\r\x00") {
		return "", fmt.Errorf("sandbox policy: path %q contains a character the macOS profile cannot express", p)
	}
	return regexp.QuoteMeta(p), nil
}
