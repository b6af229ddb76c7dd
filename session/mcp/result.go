package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coding-agent/coding-agent/tools"
)

// Content is one content block of a result, in the shape of an ACP
// ContentBlock: Type is "text", "image", "audio", "resource_link" or
// "resource".
type Content struct {
	Type        string
	Text        string
	Data        string // base64 (image, audio)
	MimeType    string
	URI         string
	Name        string
	Title       string
	Description string
	Size        *int64
	Resource    *Resource // Type "resource"
}

// Resource is an embedded resource: text or a base64 blob.
type Resource struct {
	URI      string
	MimeType string
	Text     *string
	Blob     *string
}

// Result is the outcome of a call.
type Result struct {
	// Content is for the client (ACP tool call content). When the text
	// was cut for the model, its text blocks are replaced by the cut text.
	Content []Content
	// Text is what the model is told, within tools.MaxLines and
	// tools.MaxBytes.
	Text string
	// IsError is the server's isError: the call failed.
	IsError bool
	// Structured is the server's structuredContent, nil if none.
	Structured json.RawMessage
	// FullOutputPath names the retained full text when Text was cut.
	FullOutputPath string
}

// convert turns the server's result into a Result, cutting the model's
// text and retaining the whole of it.
func convert(r *sdk.CallToolResult, callID string, store *tools.OutputStore, logger *slog.Logger) Result {
	var out Result
	out.IsError = r.IsError
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Structured = b
		}
	}
	var text strings.Builder
	line := func(s string) {
		if text.Len() > 0 {
			text.WriteByte('\n')
		}
		text.WriteString(s)
	}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out.Content = append(out.Content, Content{Type: "text", Text: c.Text})
			line(c.Text)
		case *sdk.ImageContent:
			out.Content = append(out.Content, Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
			line(fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			out.Content = append(out.Content, Content{Type: "audio", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
			line(fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			out.Content = append(out.Content, Content{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MimeType: c.MIMEType, Size: c.Size})
			desc := c.Name
			if c.Description != "" {
				desc += ": " + c.Description
			}
			line(fmt.Sprintf("[resource link %s (%s)]", c.URI, desc))
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			res := &Resource{URI: c.Resource.URI, MimeType: c.Resource.MIMEType}
			if c.Resource.Blob != nil {
				b := base64.StdEncoding.EncodeToString(c.Resource.Blob)
				res.Blob = &b
				line(fmt.Sprintf("[resource %s (%s), %d bytes]", res.URI, res.MimeType, len(c.Resource.Blob)))
			} else {
				t := c.Resource.Text
				res.Text = &t
				line(fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", res.URI, t))
			}
			out.Content = append(out.Content, Content{Type: "resource", Resource: res})
		}
	}
	if text.Len() == 0 && out.Structured != nil {
		text.Write(out.Structured)
	}
	out.Text = text.String()
	if cut, ok := head(out.Text); ok {
		note := ""
		if store == nil {
			note = "The full output was not retained."
		} else if f, err := store.Create(callID); err != nil {
			note = fmt.Sprintf("The full output was not retained: %v", err)
		} else {
			_, werr := f.WriteString(out.Text)
			cerr := f.Close()
			if werr == nil {
				werr = cerr
			}
			out.FullOutputPath = f.Name()
			note = "Full output: " + f.Name()
			if werr != nil {
				note = fmt.Sprintf("Full output incomplete (%v): %s", werr, f.Name())
			}
		}
		if out.FullOutputPath == "" {
			logger.Warn("MCP result: full output not retained", "call", callID, "note", note)
		}
		total := strings.Count(out.Text, "\n") + 1
		shown := strings.Count(cut, "\n") + 1
		out.Text = cut + fmt.Sprintf("\n\n[Output truncated: showing the first %d of %d lines (%d of %d bytes). %s]", shown, total, len(cut), len(out.Text), note)
		// The client gets the same cut text in place of the text blocks.
		kept := []Content{{Type: "text", Text: out.Text}}
		for _, c := range out.Content {
			if c.Type != "text" && c.Type != "resource" {
				kept = append(kept, c)
			}
		}
		out.Content = kept
	}
	if out.Text == "" {
		out.Text = "(no output)"
	}
	return out
}

// head returns the start of s within tools.MaxLines lines and
// tools.MaxBytes bytes, cut at a line end (or, for a single huge line, at
// a character boundary), and whether anything was cut.
func head(s string) (string, bool) {
	lines := strings.Count(s, "\n") + 1
	if len(s) <= tools.MaxBytes && lines <= tools.MaxLines {
		return s, false
	}
	end := min(len(s), tools.MaxBytes)
	n := 0
	for i := 0; i < end; i++ {
		if s[i] == '\n' {
			n++
			if n == tools.MaxLines {
				end = i
				break
			}
		}
	}
	cut := s[:end]
	if end < len(s) && s[end] != '\n' {
		if i := strings.LastIndexByte(cut, '\n'); i > 0 {
			cut = cut[:i]
		} else {
			for len(cut) > 0 && !utf8Start(s[len(cut)]) {
				cut = cut[:len(cut)-1]
			}
		}
	}
	return cut, true
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
