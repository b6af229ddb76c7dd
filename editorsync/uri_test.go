package editorsync

import (
	"strings"
	"testing"
)

func TestURIToPath(t *testing.T) {
	for _, test := range []struct {
		uri     string
		want    string
		wantErr string
	}{
		{uri: "file:///home/u/a.go", want: "/home/u/a.go"},
		{uri: "file://localhost/home/u/a.go", want: "/home/u/a.go"},
		{uri: "file:///tmp/caf%C3%A9.txt", want: "/tmp/café.txt"},
		{uri: "file:///tmp/café.txt", want: "/tmp/café.txt"},
		{uri: "file:///tmp/a%20b/%23x%3F.txt", want: "/tmp/a b/#x?.txt"},
		{uri: "file:///tmp/../etc/./x", want: "/etc/x"},
		{uri: "untitled:Untitled-1", wantErr: `scheme "untitled" is not supported`},
		{uri: "vscode-notebook-cell:/a.ipynb#c1", wantErr: `scheme "vscode-notebook-cell"`},
		{uri: "/tmp/a.go", wantErr: "no scheme"},
		{uri: "file://server/share/a.go", wantErr: `host "server"`},
		{uri: "file:a.go", wantErr: "not an absolute"},
		{uri: "file:///tmp/a.go#frag", wantErr: "no query or fragment"},
		{uri: "file:///tmp/a%ZZ", wantErr: "invalid URL escape"},
		{uri: "file:///tmp/a%00b", wantErr: "NUL"},
	} {
		t.Run(test.uri, func(t *testing.T) {
			got, err := URIToPath(test.uri)
			if test.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), test.wantErr) {
					t.Fatalf("URIToPath(%q) = %q, %v; want error containing %q", test.uri, got, err, test.wantErr)
				}
				return
			}
			if err != nil || got != test.want {
				t.Fatalf("URIToPath(%q) = %q, %v; want %q", test.uri, got, err, test.want)
			}
		})
	}
}

func TestPathToURIRoundTrip(t *testing.T) {
	for _, p := range []string{"/", "/tmp/a.go", "/tmp/a b/c#d?e%f.txt", "/home/ü/日本/😀.md"} {
		uri := PathToURI(p)
		if !strings.HasPrefix(uri, "file:///") {
			t.Errorf("PathToURI(%q) = %q, want a file:/// URI", p, uri)
		}
		if strings.ContainsAny(uri, " #?") {
			t.Errorf("PathToURI(%q) = %q: unescaped character", p, uri)
		}
		back, err := URIToPath(uri)
		if err != nil || back != p {
			t.Errorf("URIToPath(PathToURI(%q)) = %q, %v", p, back, err)
		}
	}
	if got, want := PathToURI("/tmp/café"), "file:///tmp/caf%C3%A9"; got != want {
		t.Errorf("PathToURI = %q, want %q", got, want)
	}
}
